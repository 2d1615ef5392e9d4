"""Snakemake job: induce a hub-language dictionary from two aligned spaces."""

from xlalign.mapping.induction import induce
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    ind = snakemake.params.induce
    induce(
        language=snakemake.wildcards.lang,
        hub=snakemake.params.hub,
        mapped_space=snakemake.input.space,
        hub_space=snakemake.input.hub,
        out_path=snakemake.output.dic,
        stats_path=snakemake.output.stats,
        options={k: ind[k] for k in ("retrieval", "csls_k", "max_rank", "mode")},
    )
