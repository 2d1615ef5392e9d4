"""Snakemake job: fetch one Debian package and unpack the files later jobs read (see
xlalign.resources.registry and xlalign.resources.catalog.DEB_MEMBERS). The .deb is
deleted once unpacked."""

from pathlib import Path

from xlalign.resources.registry import apt_download, extract_deb
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out = Path(snakemake.output[0])
    deb = apt_download(snakemake.wildcards.package, out.parent / "_debs")
    extract_deb(deb, out, snakemake.params.members)
    deb.unlink()
