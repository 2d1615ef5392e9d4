"""Snakemake job: udhr retrieval pairs of one language with English (see
xlalign.evaluation.tasks.labelled.udhr)."""

from xlalign.evaluation.tasks.labelled.udhr import build_udhr
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    build_udhr(
        snakemake.input.package,
        snakemake.wildcards.lang,
        snakemake.output.test,
        snakemake.output.stats,
        package=snakemake.params.package,
    )
