"""Snakemake job: the learning curve of X2S-M against aggregation for one language and seed
(see xlalign.learning_curve.curve)."""

from pathlib import Path

from xlalign.learning_curve.curve import (
    LearningCurveJob,
    run_learning_curve,
    write_learning_curve,
)
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    inp, out, p = snakemake.input, snakemake.output, snakemake.params
    job = LearningCurveJob(
        language=snakemake.wildcards.lang,
        hub=p.hub,
        name=p.name,
        sentences=Path(inp.txt),
        cache_dir=Path(inp.cache),
        vocab_path=Path(inp.vocab),
        encoder_dir=Path(inp.encoder),
        spaces={"x2s-m": Path(inp.x2s), "aggregate": Path(inp.agg)},
        hub_spaces={"x2s-m": Path(inp.hub_x2s), "aggregate": Path(inp.hub_agg)},
        # train_dictionary() gives a one-file list (none only for the hub, never here)
        train_dictionary=Path(inp.dictionary[0]),
        test={d: Path(f) for d, f in p.test.items()},
        fractions=list(p.fractions),
        subset_seed=int(p.subset_seed),
        seed=int(snakemake.wildcards.seed),
        vocab_opts=dict(p.vocab),
        x2static=dict(p.x2static),
        aggregation=dict(p.aggregation),
        align=dict(p.align),
        retrievals=list(p.retrieval),
        csls_k=int(p.csls_k),
        work_dir=Path(p.work),
        threads=snakemake.threads,
    )
    write_learning_curve(
        run_learning_curve(job),
        json_path=out.stats,
        md_path=out.md,
        figure_stem=Path(out.figure).with_suffix(""),
        retrieval=p.figure_retrieval,
    )
