"""Snakemake job: a small BERT from scratch on English + one derived language with one
pre-training row (see xlalign.derived.experiment)."""

from xlalign.derived.experiment import run_derived_pretrain
from xlalign.workflow.jobscript import checkpoint_minutes, job_logging

with job_logging(snakemake):
    wc, par = snakemake.wildcards, snakemake.params
    run_derived_pretrain(
        wc.dvrun,
        spec=wc.spec,
        data_dir=snakemake.input.data,
        output_dir=snakemake.output.model,
        stats_path=snakemake.output.stats,
        work_dir=par.work_dir,
        vocab_size=par.vocab_size,
        arch=par.arch,
        section=par.section,
        seed=int(wc.dvseed),
        device=par.device,
        gpus=int(snakemake.resources.get("gpu", 0) or 0),
        log_path=snakemake.log[0],
        checkpoint_minutes=checkpoint_minutes(snakemake),
    )
