"""Snakemake job: split one language's gold dictionaries (see xlalign.dictionaries.split)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.workflow.jobscript import job_logging
from xlalign.dictionaries.split import build_split

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
