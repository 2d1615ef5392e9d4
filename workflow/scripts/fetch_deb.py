"""Snakemake job: fetch one Debian package and unpack it (see xlalign.resources.registry)."""

from pathlib import Path

from xlalign.resources.registry import apt_download, extract_deb
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out = Path(snakemake.output[0])
    deb = apt_download(snakemake.wildcards.package, out.parent / "_debs")
    extract_deb(deb, out)
