"""Snakemake job: 001's Table 3, Figures 2-3 and the alignment/transfer correlation of the
derived-language runs (see xlalign.reporting.analyses)."""

from xlalign.core.io import atomic_dir
from xlalign.derived.experiment import read_evaluations
from xlalign.reporting.analyses import write_derived
from xlalign.reporting.html import write_html
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake), atomic_dir(snakemake.output.figures) as figures:
    out = snakemake.output
    write_derived(
        read_evaluations(snakemake.input.evals),
        out_md=out.md,
        out_tex=out.tex,
        fig_stem=f"{figures}/derived",
        summary_json=out.summary,
        sweep_spec=snakemake.params.sweep_spec,
    )
    write_html(out.md, out.html)
