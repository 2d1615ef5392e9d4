"""Snakemake job: fine-tune an encoder on one task with one seed, evaluate it on English
and the test languages (see xlalign.evaluation.tasks.run)."""

from xlalign.evaluation.tasks.run import run_finetune_job
from xlalign.workflow.jobscript import checkpoint_minutes, job_logging

with job_logging(snakemake):
    wc, inp, par = snakemake.wildcards, snakemake.input, snakemake.params
    run_finetune_job(
        wc.task,
        gpus=int(snakemake.resources.get("gpu", 0) or 0),
        log_path=snakemake.log[0],
        encoder=inp.encoder,
        encoder_name=wc.encoder,
        train=par.splits["train"],
        dev=par.splits["dev"],
        tests=par.tests,
        seed=int(wc.ftseed),
        output_dir=snakemake.output.run,
        stats_path=snakemake.output.stats,
        work_dir=par.work_dir,
        params=par.params,
        device=par.device,
        precision=par.precision,
        keep_model=par.keep_model,
        continual=par.continual,
        checkpoint_minutes=checkpoint_minutes(snakemake),
    )
