"""Snakemake job: seeds aggregated and significance against the baselines (the Table 1
and Table 3 analogues with p-values), from every BLI, fine-tuning and retrieval result."""

from xlalign.reporting.html import write_html
from xlalign.reporting.statistics import run_statistics
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    p = snakemake.params
    run_statistics(
        runs=list(snakemake.input.runs),
        retrieval=list(snakemake.input.retrieval),
        bli=list(snakemake.input.bli),
        md_path=snakemake.output.md,
        summary_path=snakemake.output.summary,
        encoders=p.encoders,
        base_encoder=p.base_encoder,
        pretrain_runs=p.pretrain_runs,
        tasks=p.tasks,
        retrieval_sets=p.retrieval_sets,
        spaces=p.spaces,
        bli_baseline=p.bli_baseline,
        bli_retrieval=p.bli_retrieval,
        budget_mb=snakemake.config["memory"]["block_mb"],
        **p.significance,
    )
    write_html(snakemake.output.md, snakemake.output.html)
