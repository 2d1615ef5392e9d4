"""Snakemake job: fetch one Debian package and unpack it (see xlalign.resources.registry)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.workflow.jobscript import job_logging
from xlalign.resources.registry import apt_download, extract_deb

with job_logging(snakemake):
    out = Path(snakemake.output[0])
    deb = apt_download(snakemake.wildcards.package, out.parent / "_debs")
    extract_deb(deb, out)
