"""Snakemake job: a Hugging Face model fetched into resources/ (see xlalign.resources.download)."""

from xlalign.resources.download import download_huggingface_model
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    download_huggingface_model(
        snakemake.params.repo,
        snakemake.output[0],
        revision=snakemake.params.revision,
        endpoint=snakemake.params.endpoint,
        retries=snakemake.params.retries,
        timeout=snakemake.params.timeout,
    )
