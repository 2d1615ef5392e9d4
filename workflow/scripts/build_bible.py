"""Snakemake job: one Bible translation as a unit TSV (see xlalign.embedded.bible)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.embedded.bible import build_bible, locate_db
from xlalign.jobs import job_logging

with job_logging(snakemake):
    build_bible(
        locate_db(snakemake.input[0]),
        snakemake.wildcards.translation,
        snakemake.output.tsv,
        snakemake.output.stats,
        heldout_books=snakemake.params.heldout_books,
        allow_restricted=snakemake.params.allow_restricted,
        language=snakemake.wildcards.lang,
    )
