"""Snakemake job: 004's Table 5 analogue and the retrieval-by-layer figure of the
meta-pretraining variants (see xlalign.reporting.analyses)."""

from xlalign.core.io import atomic_dir, read_json
from xlalign.reporting.analyses import write_meta
from xlalign.reporting.html import write_html
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake), atomic_dir(snakemake.output.figures) as figures:
    out = snakemake.output
    write_meta(
        [read_json(p) for p in snakemake.input.evals],
        out_md=out.md,
        out_tex=out.tex,
        fig_stem=f"{figures}/metapretrain",
        summary_json=out.summary,
    )
    write_html(out.md, out.html)
