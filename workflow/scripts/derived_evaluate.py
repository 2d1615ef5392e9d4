"""Snakemake job: ZS, SUP and Delta of one derived-language model, and its alignment
scores (see xlalign.derived.experiment)."""

from pathlib import Path

from xlalign.derived.experiment import run_derived_evaluate
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    wc, par = snakemake.wildcards, snakemake.params
    data = Path(snakemake.input.data)
    run_derived_evaluate(
        model_dir=snakemake.input.model,
        model_name=f"{wc.dvrun}.{wc.spec}.s{wc.dvseed}",
        run=wc.dvrun,
        spec=wc.spec,
        tasks={task: data / "tasks" / task for task in par.tasks},
        task_settings=par.task_settings,
        seed=int(wc.dvseed),
        output=snakemake.output.stats,
        work_dir=par.work_dir,
        pretrain_stats=snakemake.input.pretrain,
        device=par.device,
    )
