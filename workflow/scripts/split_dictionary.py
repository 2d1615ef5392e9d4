"""Snakemake job: split one language's gold dictionaries (see xlalign.dictionaries.split)."""

from xlalign.dictionaries.split import build_split
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out = snakemake.output
    build_split(
        language=snakemake.wildcards.lang,
        hub=snakemake.params.hub,
        pool=list(snakemake.input.pool),
        hub_vocab=snakemake.input.hub_vocab,
        vocab=snakemake.input.vocab,
        test=snakemake.input.get("test"),
        reverse_test=snakemake.input.get("reverse_test"),
        outputs={
            "train": out.train,
            "valid": out.valid,
            "test": out.test,
            "reverse_valid": out.reverse_valid,
            "reverse_test": out.reverse_test,
        },
        stats_path=out.stats,
        options=snakemake.params.options,
    )
