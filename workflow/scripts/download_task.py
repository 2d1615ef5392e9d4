"""Snakemake job: one official file of a zero-shot task (see xlalign.evaluation.tasks.official)."""

from xlalign.evaluation.tasks.official import fetch
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake) as log:
    dl = snakemake.params.dl
    log.info("downloading %s -> %s (sha256 %s)", dl["url"], snakemake.output[0], dl["sha256"])
    fetch(dl, snakemake.output[0])
