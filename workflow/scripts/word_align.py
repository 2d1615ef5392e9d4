"""Snakemake job: eflomal word alignment of one language pair (see xlalign.wordalign.eflomal)."""

from pathlib import Path

from xlalign.wordalign.eflomal import AlignmentPaths, AlignOptions, align_corpus
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    out = snakemake.output
    align_corpus(
        snakemake.input.corpus,
        AlignmentPaths(
            forward=Path(out.fwd),
            reverse=Path(out.rev),
            symmetrized=Path(out.sym),
            pairs=Path(out.pairs),
            stats=Path(out.stats),
        ),
        AlignOptions.from_config(snakemake.params.options),
        tmpdir=snakemake.resources.get("tmpdir"),
        checkpoint_dir=snakemake.params.checkpoint,
        priors=snakemake.input.priors[0] if snakemake.input.priors else None,
        threads=snakemake.threads,
    )
