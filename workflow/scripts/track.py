"""Snakemake job (local): mirror one seed's job stats into MLflow.

See xlalign.workflow.tracking; the records come from xlalign.workflow.manifest.
"""

from pathlib import Path

from xlalign.workflow.jobscript import job_logging
from xlalign.workflow.tracking import JobRecord, git_revision, mirror

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
        parent_params={
            "languages": ",".join(cfg["languages"]),
            "seed": seed,
            "encoder.source": cfg["encoder"]["source"],
            "encoder.name": cfg["encoder"]["name"],
            "corpus.max_sentences": cfg["corpus"]["max_sentences"],
            **{
                f"corpus.per_language.{lang}.max_sentences": v["max_sentences"]
                for lang, v in sorted(cfg["corpus"]["per_language"].items())
            },
            "corpus.strategy": cfg["corpus"]["strategy"],
            "corpus.seed": cfg["corpus"]["seed"],
            "segment.min_tokens": cfg["segment"]["min_tokens"],
            "segment.min_paragraph_sentences": cfg["segment"]["min_paragraph_sentences"],
        },
        summary_path=snakemake.output[0],
    )
