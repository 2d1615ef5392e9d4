"""Snakemake job: sentence retrieval of every configured set with one encoder, at the
configured layer and every layer (see xlalign.evaluation.tasks.run.run_retrieval_sets)."""

from xlalign.evaluation.tasks.run import RetrievalSet, run_retrieval_sets
from xlalign.workflow.jobscript import job_logging


def _each(outputs):
    """A named output of one file or several, as a list (one per set)."""
    return [outputs] if isinstance(outputs, str) else list(outputs)


with job_logging(snakemake):
    par, out = snakemake.params, snakemake.output
    run_retrieval_sets(
        [
            RetrievalSet(
                name,
                dict(zip(spec["languages"], spec["files"], strict=True)),
                stats_path=results,
                predictions_dir=predictions,
                max_pairs=spec["max_pairs"],
            )
            for (name, spec), results, predictions in zip(
                par.sets.items(), _each(out.results), _each(out.predictions), strict=True
            )
        ],
        encoder=snakemake.input.encoder,
        encoder_name=snakemake.wildcards.encoder,
        device=par.device,
        work_dir=par.work_dir,
        stats_path=out.stats,
        budget_mb=snakemake.config["memory"]["block_mb"],
        mteb=par.mteb,
        **par.settings,
    )
