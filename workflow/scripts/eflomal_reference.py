"""Snakemake job: eflomal's AER on the gold sentences, the reference point of the
representation-based word alignments (see xlalign.analysis.experiment)."""

from xlalign.analysis.experiment import run_eflomal_reference
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    par = snakemake.params
    run_eflomal_reference(
        gold_source=par.gold,
        corpus_tsv=snakemake.input.get("corpus"),
        sets=par.sets,
        corpora={
            sid: (path, swap)
            for (sid, swap), path in zip(
                par.corpora, snakemake.input.get("corpora", []), strict=True
            )
        },
        gold_format=par.gold_format,
        gold_base=par.gold_base,
        output=snakemake.output.stats,
        wordalign=par.wordalign,
        seed=par.seed if par.seed is not None else 0,
        max_pairs=par.max_pairs,
        tmpdir=snakemake.resources.get("tmpdir"),
        threads=snakemake.threads,
    )
