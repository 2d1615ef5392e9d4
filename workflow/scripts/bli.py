"""Snakemake job: BLI of one space and language against the hub, both directions (in the
pair's own mapped spaces when the space was mapped)."""

from xlalign.mapping.pairs import bli_pair_record
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    p = snakemake.params
    pair, alignment = snakemake.input.pair, snakemake.input.alignment
    bli_pair_record(
        space_name=snakemake.wildcards.space,
        seed=int(snakemake.wildcards.seed),
        language=snakemake.wildcards.lang,
        hub=p.hub,
        space=snakemake.input.space,
        hub_space=snakemake.input.hub,
        dictionaries=p.dictionaries,
        out_path=snakemake.output[0],
        pair=pair[0] if len(pair) else None,
        alignment_stats=alignment[0] if len(alignment) else None,
        retrievals=p.retrieval,
        csls_k=p.csls_k,
        ks=p.ks,
        oov=p.oov,
        budget_mb=snakemake.config["memory"]["block_mb"],
    )
