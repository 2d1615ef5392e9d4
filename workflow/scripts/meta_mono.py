"""Snakemake job: meta-pretraining, a monolingual English BERT from scratch (see
xlalign.metapretrain.experiment)."""

from xlalign.metapretrain.experiment import run_meta_mono
from xlalign.workflow.jobscript import checkpoint_minutes, job_logging

with job_logging(snakemake):
    par = snakemake.params
    run_meta_mono(
        text=snakemake.input.text,
        output_dir=snakemake.output.model,
        stats_path=snakemake.output.stats,
        work_dir=par.work_dir,
        vocab_size=par.vocab_size,
        arch=par.arch,
        section=par.section,
        steps=par.steps,
        seed=int(snakemake.wildcards.mpseed),
        device=par.device,
        gpus=int(snakemake.resources.get("gpu", 0) or 0),
        log_path=snakemake.log[0],
        checkpoint_minutes=checkpoint_minutes(snakemake),
    )
