"""Snakemake job: BLI of one space and language against the hub, both directions."""

from xlalign.evaluation.bli import bli_record
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    p = snakemake.params
    bli_record(
        space_name=snakemake.wildcards.space,
        seed=int(snakemake.wildcards.seed),
        language=snakemake.wildcards.lang,
        hub=p.hub,
        space=snakemake.input.space,
        hub_space=snakemake.input.hub,
        dictionaries=p.dictionaries,
        out_path=snakemake.output[0],
        retrievals=p.retrieval,
        csls_k=p.csls_k,
        ks=p.ks,
        oov=p.oov,
    )
