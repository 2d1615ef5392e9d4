"""Snakemake job: score an alignment dictionary against gold dictionaries (xlalign.wordalign.linkdict)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.workflow.jobscript import job_logging
from xlalign.wordalign.linkdict import evaluate_against

with job_logging(snakemake):
    references = {"test": snakemake.input.test}
    references.update({Path(p).stem: p for p in snakemake.input.pool})
    evaluate_against(
        snakemake.input.induced,
        references,
        snakemake.output[0],
        lowercase=snakemake.params.lowercase,
    )
