"""Snakemake job: the teacher's context vectors of one language, cached on disk once."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.workflow.jobscript import job_logging
from xlalign.static.teacher import build_teacher_cache
from xlalign.corpus.vocab import read_vocab

with job_logging(snakemake):
    p = snakemake.params
    build_teacher_cache(
        snakemake.input.txt,
        read_vocab(snakemake.input.vocab),
        snakemake.input.encoder,
        Path(snakemake.output.meta).parent,
        layer=p.layer,
        pooling=p.pooling,
        context=p.context,
        max_length=p.max_length,
        batch_tokens=p.batch_tokens,
        threads=snakemake.threads,
        language=snakemake.wildcards.lang,
    )
