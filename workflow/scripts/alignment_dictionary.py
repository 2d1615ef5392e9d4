"""Snakemake job: a bilingual dictionary from word-alignment link counts.

See xlalign.wordalign.linkdict.
"""

from xlalign.wordalign.linkdict import LinkDictOptions, dictionary_from_alignment
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    dictionary_from_alignment(
        snakemake.input.pairs,
        snakemake.output.txt,
        snakemake.output.stats,
        LinkDictOptions.from_config(snakemake.params.options),
    )
