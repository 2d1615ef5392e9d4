"""Snakemake job: X2S-M static vectors of one language and seed (see xlalign.static.x2static).

With ``resources: gpu=N`` (N > 1, and at least two GPUs visible) the training runs
data-parallel under torchrun, one process per GPU; otherwise in this process.
"""

from pathlib import Path

from xlalign.static.x2static import X2StaticArgs, X2StaticJob, run_x2static_job
from xlalign.workflow.jobscript import checkpoint_minutes, job_logging

with job_logging(snakemake):
    out = snakemake.output
    job = X2StaticJob(
        cache_dir=Path(snakemake.input.cache),
        vocab_path=snakemake.input.vocab,
        vec_path=out.vec,
        npy_path=out.npy,
        stats_path=out.stats,
        checkpoint_dir=snakemake.params.checkpoint,
        language=snakemake.wildcards.lang,
        args=X2StaticArgs(
            seed=int(snakemake.wildcards.seed),
            init=snakemake.params.init,
            init_vectors=snakemake.input.init[0] if snakemake.input.init else None,
            checkpoint_minutes=checkpoint_minutes(snakemake),
            **snakemake.params.args,
        ),
    )
    run_x2static_job(job, gpus=int(snakemake.resources.get("gpu", 0) or 0))
