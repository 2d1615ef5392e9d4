"""Snakemake job: the zero-shot tables (Table 3 shape, per-language Tables 8-12, the
retrieval layer sweep) from every fine-tuning and retrieval result."""

from xlalign.reporting.html import write_html
from xlalign.reporting.zeroshot import write_zeroshot_tables
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    write_zeroshot_tables(
        runs=list(snakemake.input.runs),
        retrieval=list(snakemake.input.retrieval),
        md_path=snakemake.output.md,
        summary_path=snakemake.output.summary,
        encoders=snakemake.params.encoders,
        tasks=snakemake.params.tasks,
        retrieval_sets=snakemake.params.retrieval,
    )
    write_html(snakemake.output.md, snakemake.output.html)
