"""Snakemake job: English and its derived language for one composition, as pre-training
text and task data (see xlalign.derived.data)."""

from xlalign.core.io import atomic_dir
from xlalign.derived.experiment import build_derived_data
from xlalign.workflow.jobscript import job_logging

# the data folder is built aside and appears whole
with job_logging(snakemake), atomic_dir(snakemake.output.data) as data:
    par = snakemake.params
    build_derived_data(
        spec=snakemake.wildcards.spec,
        text=snakemake.input.text,
        tasks=par.tasks,
        task_settings=par.task_settings,
        out_dir=data,
        stats_path=snakemake.output.stats,
        max_paragraphs=par.max_paragraphs,
        dictionary_fraction=par.dictionary_fraction,
        dictionary_fractions=par.dictionary_fractions,
        parallel_fractions=par.parallel_fractions,
        syntax=par.syntax,
        seed=par.seed,
    )
