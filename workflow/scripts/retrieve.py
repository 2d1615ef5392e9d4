"""Snakemake job: sentence retrieval of one set with one encoder, at the configured layer
and every layer (see xlalign.evaluation.tasks.run)."""

from xlalign.evaluation.tasks.run import run_retrieval
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    par = snakemake.params
    run_retrieval(
        snakemake.wildcards.rset,
        encoder=snakemake.input.encoder,
        encoder_name=snakemake.wildcards.encoder,
        sets=dict(zip(par.languages, par.files, strict=True)),
        stats_path=snakemake.output.stats,
        predictions_dir=snakemake.output.predictions,
        max_pairs=par.max_pairs,
        device=par.device,
        **par.settings,
    )
