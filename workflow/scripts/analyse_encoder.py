"""Snakemake job: AER and word alignment score by layer, and L2 distances of related and
unrelated pairs, of one encoder (see xlalign.analysis.experiment)."""

from xlalign.analysis.experiment import run_encoder_analysis
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    par = snakemake.params
    run_encoder_analysis(
        encoder=par.encoder,
        name=snakemake.wildcards.aenc,
        gold_source=par.gold,
        sets=par.sets,
        gold_format=par.gold_format,
        gold_base=par.gold_base,
        methods=par.methods,
        distances=par.distances,
        settings=par.settings,
        output=snakemake.output.stats,
        device=par.device,
    )
