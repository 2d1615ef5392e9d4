"""Snakemake job: a bilingual dictionary from word-alignment link counts (xlalign.wordalign.linkdict)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.workflow.jobscript import job_logging
from xlalign.wordalign.linkdict import LinkDictOptions, dictionary_from_alignment

with job_logging(snakemake):
    dictionary_from_alignment(
        snakemake.input.pairs,
        snakemake.output.txt,
        snakemake.output.stats,
        LinkDictOptions.from_config(snakemake.params.options),
    )
