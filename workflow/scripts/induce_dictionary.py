"""Snakemake job: induce a hub-language dictionary from two aligned spaces."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.workflow.jobscript import job_logging
from xlalign.mapping.induction import induce

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
