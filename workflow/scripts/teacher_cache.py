"""Snakemake job: the teacher's context vectors of one language, cached on disk once, and
in the same encoder pass the aggregation baseline's sums of the seeds that use this corpus."""

from pathlib import Path

from xlalign.corpus.vocab import read_vocab
from xlalign.static.aggregation import teacher_pass_seeds
from xlalign.static.teacher import build_teacher_cache
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    p, cfg = snakemake.params, snakemake.config
    # Read from the config, not params: the sums are a fingerprinted by-product that the
    # aggregate job checks (and computes itself when missing), so a change of seeds or of
    # max_contexts must not re-run this job and every X2S-M job after it.
    seeds = teacher_pass_seeds(cfg, int(snakemake.wildcards.sseed))
    build_teacher_cache(
        snakemake.input.txt,
        read_vocab(snakemake.input.vocab),
        snakemake.input.encoder,
        Path(snakemake.output.stats).parent,
        layer=p.layer,
        pooling=p.pooling,
        context=p.context,
        max_length=p.max_length,
        batch_tokens=p.batch_tokens,
        threads=snakemake.threads,
        language=snakemake.wildcards.lang,
        aggregation_seeds=seeds,
        max_contexts=cfg["extract"]["aggregation"]["max_contexts"],
    )
