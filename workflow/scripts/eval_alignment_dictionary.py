"""Snakemake job: score an alignment dictionary against gold dictionaries.

See xlalign.wordalign.linkdict.
"""

from pathlib import Path

from xlalign.wordalign.linkdict import evaluate_against
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    references = {"test": snakemake.input.test}
    references.update({Path(p).stem: p for p in snakemake.input.pool})
    evaluate_against(
        snakemake.input.induced,
        references,
        snakemake.output[0],
        lowercase=snakemake.params.lowercase,
    )
