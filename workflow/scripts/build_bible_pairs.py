"""Snakemake job: held-out Bible verse pairs of one language with English (see
xlalign.evaluation.tasks.labelled.bible)."""

from xlalign.evaluation.tasks.labelled.bible import build_bible_pairs
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    build_bible_pairs(
        snakemake.input.source,
        snakemake.input.english,
        snakemake.wildcards.lang,
        snakemake.output.test,
        snakemake.output.stats,
        source_translation=snakemake.params.translation,
        english_translation=snakemake.params.english_translation,
        max_pairs=snakemake.params.max_pairs,
    )
