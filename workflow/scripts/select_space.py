"""Snakemake job: keep the mapped or the unmapped space of one language (validation BLI)."""

from xlalign.mapping.recipes import recipe_args
from xlalign.mapping.selection import select_space
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    sel = snakemake.params.selection
    args = recipe_args(snakemake.params.recipe, **snakemake.params.options)
    select_space(
        language=snakemake.wildcards.lang,
        hub=snakemake.params.hub,
        mapped=snakemake.input.mapped,
        mapped_pair=snakemake.input.mapped_pair,
        unmapped=snakemake.input.unmapped,
        hub_space=snakemake.input.hub,
        mapped_stats=snakemake.input.mapped_stats,
        valid=snakemake.params.valid,
        normalize=list(args.normalize),
        out_stem=snakemake.output.npy,
        vec_path=snakemake.output.vec,
        stats_path=snakemake.output.stats,
        pair_path=snakemake.output.pair,
        metric=sel["metric"],
        retrieval=sel["retrieval"],
        csls_k=snakemake.params.csls_k,
        min_margin=sel["min_margin"],
        enabled=sel["enabled"],
        budget_mb=snakemake.config["memory"]["block_mb"],
    )
