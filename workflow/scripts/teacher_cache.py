"""Snakemake job: the teacher's context vectors of one language, cached on disk once."""

from pathlib import Path

from xlalign.corpus.vocab import read_vocab
from xlalign.static.teacher import build_teacher_cache
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    p = snakemake.params
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
    )
