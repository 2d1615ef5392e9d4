"""Snakemake job: the induction space of one language mapped into the hub without a
dictionary (the paper's fastText + unsupervised VecMap)."""

from xlalign.mapping.hub import map_to_hub
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    ind = snakemake.params.induce
    fasttext = ind["space"] == "fasttext"
    map_to_hub(
        language=snakemake.wildcards.lang,
        hub=snakemake.params.hub,
        space=snakemake.input.space,
        hub_space=snakemake.input.hub,
        dictionary=None,
        recipe=ind["recipe"],
        options=ind["options"],
        seed=int(snakemake.wildcards.seed),
        out_stem=snakemake.output.npy,
        stats_path=snakemake.output.stats,
        pair_path=snakemake.output.pair,
        checkpoint_dir=snakemake.params.checkpoint,
        degenerate=snakemake.params.degenerate,
        max_words=ind["max_words"] if fasttext else None,
        lowercase=ind["lowercase"] and fasttext,
        budget_mb=snakemake.config["memory"]["block_mb"],
    )
