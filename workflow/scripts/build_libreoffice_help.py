"""Snakemake job: LibreOffice help of one language as a unit TSV.

Blocks still in English (identical to the English help) or without a letter of the
language's script are dropped as untranslated (see xlalign.resources.embedded.libreoffice).
"""

from xlalign.resources.embedded.libreoffice import build_libreoffice_help
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    build_libreoffice_help(
        snakemake.input.help,
        snakemake.wildcards.lang,
        snakemake.output.tsv,
        snakemake.output.stats,
        heldout_fraction=snakemake.params.heldout_fraction,
        english_root=snakemake.input.english if snakemake.wildcards.lang != "en" else None,
    )
