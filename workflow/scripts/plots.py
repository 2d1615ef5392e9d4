"""Snakemake job: the run's figures (PNG and SVG) from its BLI, zero-shot and
pre-training results (xlalign.reporting.figures)."""

from xlalign.core.io import atomic_dir
from xlalign.reporting.figures import write_figures
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake), atomic_dir(snakemake.output.plots) as plots_dir:
    p = snakemake.params
    write_figures(
        out_dir=plots_dir,
        bli=list(snakemake.input.bli),
        runs=list(snakemake.input.runs),
        retrieval=list(snakemake.input.retrieval),
        pretrain=list(snakemake.input.pretrain),
        learning_curve=(snakemake.input.learning_curve or [None])[0],
        spaces=p.spaces,
        base_encoder=p.base_encoder,
        tasks=p.tasks,
        metric=p.metric,
        bli_retrieval=p.bli_retrieval,
    )
