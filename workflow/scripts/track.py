"""Snakemake job (local): mirror one seed's job stats into MLflow.

See xlalign.workflow.tracking; the records come from xlalign.workflow.manifest.
"""

from pathlib import Path

from xlalign.workflow.jobscript import job_logging
from xlalign.workflow.tracking import JobRecord, config_params, git_revision, mirror

with job_logging(snakemake):
    cfg = snakemake.params.config
    seed = int(snakemake.wildcards.seed)
    records = [
        JobRecord(
            job=r["job"],
            stage=r["stage"],
            stats=Path(r["stats"]),
            language=r["language"],
            benchmark=Path(r["benchmark"]) if r["benchmark"] else None,
        )
        for r in snakemake.params.records
    ]
    mirror(
        records,
        uri=snakemake.params.uri,
        experiment=snakemake.params.experiment,
        artifact_location=snakemake.params.artifacts,
        parent_name=f"{cfg['name']}/seed{seed}",
        parent_tags={
            "config_hash": snakemake.params.config_hash,
            "seed": str(seed),
            "languages": ",".join(cfg["languages"]),
            "config_name": cfg["name"],
            "git_revision": git_revision(Path(snakemake.scriptdir).resolve().parents[1]),
            "encoder": cfg["encoder"]["name"],
        },
        # the parent's params: its seed and the resolved configuration
        parent_params={"seed": seed, **config_params(cfg)},
        # the parent's BLI metrics: the tables' retrieval and metric
        bli_metric=cfg["evaluate"]["tables"]["metric"],
        bli_retrieval=cfg["evaluate"]["tables"]["retrieval"],
        summary_path=snakemake.output[0],
    )
