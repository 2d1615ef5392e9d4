"""Snakemake job: one resumable, checksummed HTTP(S) download (see xlalign.resources.download)."""

from xlalign.resources.download import download
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake) as log:
    dl = snakemake.params.dl
    log.info("downloading %s -> %s", dl["url"], snakemake.output[0])
    download(
        dl["url"],
        snakemake.output[0],
        sha256=dl["sha256"],
        retries=dl["retries"],
        timeout=dl["timeout"],
    )
