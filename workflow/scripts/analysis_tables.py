"""Snakemake job: AER by layer, word alignment scores (and their correlation with the
encoders' zero-shot transfer) and L2 distances of every analysed encoder, as tables and
figures (see xlalign.reporting.analyses)."""

from xlalign.core.io import atomic_dir, read_json
from xlalign.reporting.analyses import write_analysis, zero_shot_transfer
from xlalign.reporting.html import write_html
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake), atomic_dir(snakemake.output.figures) as figures:
    out = snakemake.output
    write_analysis(
        [read_json(p) for p in snakemake.input.encoders],
        read_json(snakemake.input.reference),
        out_md=out.md,
        out_tex=out.tex,
        fig_dir=figures,
        summary_json=out.summary,
        transfer=zero_shot_transfer([read_json(p) for p in snakemake.input.runs]),
        languages=snakemake.params.languages,
    )
    write_html(out.md, out.html)
