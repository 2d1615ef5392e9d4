"""Snakemake job: the teacher's context vectors of one language, cached on disk once, and
in the same encoder pass the aggregation baseline's sums of the seeds that use this corpus."""

from pathlib import Path

from xlalign.core.io import read_json, write_json
from xlalign.corpus.vocab import read_vocab
from xlalign.learning_curve.curve import size_collectors
from xlalign.static.teacher import build_teacher_cache, staged_cache
from xlalign.workflow.jobscript import job_logging
from xlalign.workflow.paths import teacher_pass_seeds

with job_logging(snakemake):
    p, cfg = snakemake.params, snakemake.config
    # Read from the config, not params: the sums are a fingerprinted by-product that the
    # aggregate job checks (and computes itself when missing), so a change of seeds or of
    # max_contexts must not re-run this job and every X2S-M job after it.
    seeds = teacher_pass_seeds(cfg, int(snakemake.wildcards.sseed))
    lang, lc = snakemake.wildcards.lang, cfg["learning_curve"]
    # Built in <cache>.partial/ (resumed there after a kill), renamed into place when complete.
    with staged_cache(snakemake.output.cache) as out:
        # A learning-curve language: the same pass collects each size's aggregation samples
        # (fingerprinted with the size's lines; the learning_curve job encodes them itself
        # when missing, so this too is read from the config).
        subsets = (
            size_collectors(
                snakemake.input.txt,
                snakemake.input.encoder,
                out,
                seeds=seeds,
                fractions=lc["fractions"],
                subset_seed=lc["seed"],
                vocab_opts=cfg["extract"]["vocab"],
                layer=p.layer,
                pooling=p.pooling,
                max_length=p.max_length,
                max_contexts=cfg["extract"]["aggregation"]["max_contexts"],
                language=lang,
            )
            if lc["enabled"] and lang in lc["languages"] and seeds and p.context != "x2static-code"
            else []
        )
        build_teacher_cache(
            snakemake.input.txt,
            read_vocab(snakemake.input.vocab),
            snakemake.input.encoder,
            out,
            layer=p.layer,
            pooling=p.pooling,
            context=p.context,
            max_length=p.max_length,
            batch_tokens=p.batch_tokens,
            threads=snakemake.threads,
            language=lang,
            aggregation_seeds=seeds,
            max_contexts=cfg["extract"]["aggregation"]["max_contexts"],
            subset_collectors=subsets,
            budget_mb=cfg["memory"]["block_mb"],  # from the config: see the rule
        )
    # The record of the job, kept beside the cache (which is deleted once read).
    write_json(snakemake.output.stats, read_json(Path(snakemake.output.cache) / "meta.json"))
