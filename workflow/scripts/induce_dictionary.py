"""Snakemake job: induce a hub-language dictionary in the pair's own mapped spaces."""

from xlalign.mapping.induction import induce
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    ind = snakemake.params.induce
    induce(
        language=snakemake.wildcards.lang,
        hub=snakemake.params.hub,
        pair=snakemake.input.pair,
        hub_space=snakemake.input.hub,
        out_path=snakemake.output.dic,
        stats_path=snakemake.output.stats,
        options={k: ind[k] for k in ("retrieval", "csls_k", "max_rank", "mode")},
        budget_mb=snakemake.config["memory"]["block_mb"],
    )
