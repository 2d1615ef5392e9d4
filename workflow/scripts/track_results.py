"""Snakemake job (local): the configuration's aggregated metrics, tables and figures on
its own MLflow parent run (xlalign.workflow.tracking.mirror_aggregates)."""

from pathlib import Path

from xlalign.workflow.jobscript import job_logging
from xlalign.workflow.tracking import mirror_aggregates

with job_logging(snakemake):
    p = snakemake.params
    mirror_aggregates(
        statistics=snakemake.input.statistics,
        artifacts={
            "tables": p.tables_dir,
            "plots": snakemake.input.plots,
            **({"figures": p.figures_dir} if snakemake.input.analyses else {}),
        },
        analyses={Path(f).stem: f for f in snakemake.input.analyses},
        uri=p.uri,
        experiment=p.experiment,
        artifact_location=p.artifacts,
        parent_name=f"{p.name}/all-seeds",
        parent_tags={"config_hash": p.config_hash, "config_name": p.name},
        summary_path=snakemake.output.summary,
    )
