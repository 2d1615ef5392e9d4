"""Snakemake job: the records of one zero-shot task in one language, from its official files."""

from xlalign.evaluation.tasks.official import prepare_task
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake) as log:
    stats = prepare_task(
        snakemake.wildcards.task,
        snakemake.wildcards.lang,
        list(snakemake.input),
        snakemake.output.dir,
        options=snakemake.params.options,
    )
    log.info("%s/%s: %s", stats["task"], stats["lang"], stats["splits"])
