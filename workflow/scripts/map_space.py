"""Snakemake job: map one language's static space into the hub's with VecMap."""

from xlalign.mapping.hub import map_to_hub
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    dictionary = snakemake.input.dictionary
    map_to_hub(
        language=snakemake.wildcards.lang,
        hub=snakemake.params.hub,
        space=snakemake.input.space,
        hub_space=snakemake.input.hub,
        dictionary=dictionary[0] if len(dictionary) else None,
        recipe=snakemake.params.recipe,
        options=snakemake.params.options,
        seed=int(snakemake.wildcards.seed),
        out_stem=snakemake.output.npy,
        stats_path=snakemake.output.stats,
        pair_path=snakemake.output.pair,
        checkpoint_dir=snakemake.params.checkpoint,
        empty=snakemake.params.empty,
        degenerate=snakemake.params.degenerate,
        heldout=snakemake.params.heldout,
        overlap=snakemake.params.overlap,
        budget_mb=snakemake.config["memory"]["block_mb"],
    )
