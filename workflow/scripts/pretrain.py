"""Snakemake job: continued pre-training of the encoder for one run and pre-training seed
(see xlalign.pretrain.run)."""

from xlalign.pretrain.run import run_pretrain_job
from xlalign.workflow.jobscript import checkpoint_minutes, job_logging

with job_logging(snakemake):
    wc, par = snakemake.wildcards, snakemake.params
    run_pretrain_job(
        wc.run,
        gpus=int(snakemake.resources.get("gpu", 0) or 0),
        log_path=snakemake.log[0],
        encoder=snakemake.input.encoder,
        objectives=par.objectives,
        files=par.files,
        params=par.settings,
        seed=int(wc.seed),
        output_dir=snakemake.output.model,
        stats_path=snakemake.output.stats,
        work_dir=par.work_dir,
        hub=par.hub,
        validation_paragraphs=par.validation_paragraphs,
        validation_max_sequences=par.validation_max_sequences,
        device=par.device,
        precision=par.precision,
        checkpoint_minutes=checkpoint_minutes(snakemake),
    )
