"""Snakemake job: word similarity of one space (SemEval-2017 Task 2, English sets)."""

from xlalign.evaluation.wordsim import wordsim_datasets, wordsim_record
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    p = snakemake.params
    datasets = wordsim_datasets(
        languages=p.languages,
        semeval=snakemake.input.get("semeval"),
        english=snakemake.input.get("english"),
        english_sets=p.english_sets,
    )
    wordsim_record(
        space_name=snakemake.wildcards.space,
        seed=int(snakemake.wildcards.seed),
        spaces=dict(zip(p.languages, snakemake.input.spaces, strict=True)),
        datasets=datasets,
        out_path=snakemake.output[0],
        compose=p.compose,
    )
