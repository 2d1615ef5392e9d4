"""Snakemake job: one cross-lingual variant initialised from the meta-pretrained model and
pre-trained on every language (see xlalign.metapretrain.experiment)."""

from xlalign.metapretrain.experiment import run_meta_cross
from xlalign.workflow.jobscript import checkpoint_minutes, job_logging

with job_logging(snakemake):
    wc, par = snakemake.wildcards, snakemake.params
    run_meta_cross(
        wc.variant,
        mono_dir=snakemake.input.mono,
        texts=par.texts,
        dictionaries=par.dictionaries if snakemake.input.dictionaries else None,
        output_dir=snakemake.output.model,
        stats_path=snakemake.output.stats,
        work_dir=par.work_dir,
        vocab_size=par.vocab_size,
        section=par.section,
        steps=par.steps,
        language_alpha=par.language_alpha,
        seed=int(wc.mpseed),
        device=par.device,
        gpus=int(snakemake.resources.get("gpu", 0) or 0),
        log_path=snakemake.log[0],
        checkpoint_minutes=checkpoint_minutes(snakemake),
    )
