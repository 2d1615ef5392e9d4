"""Snakemake job: zero-shot POS and retrieval by layer of one meta-pretraining variant
(see xlalign.metapretrain.experiment)."""

from xlalign.metapretrain.experiment import run_meta_evaluate
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    wc, par = snakemake.wildcards, snakemake.params
    run_meta_evaluate(
        model_dir=snakemake.input.model,
        model_name=f"meta-{wc.variant}.s{wc.mpseed}",
        tasks=par.tasks,
        retrieval=par.retrieval,
        seed=int(wc.mpseed),
        output=snakemake.output.stats,
        work_dir=par.work_dir,
        pretrain_stats=snakemake.input.stats,
        device=par.device,
    )
