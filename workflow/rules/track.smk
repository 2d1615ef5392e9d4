# MLflow mirroring: one local job per configuration x seed writes the store (single writer,
# file-locked); jobs themselves only write JSON beside their outputs.


localrules:
    track,


rule track:
    input:
        # The stats of every tracked job (tracking.smk), so that it runs after them.
        lambda wc: [r["stats"] for r in track_records(wc.seed)],
    output:
        summary=f"{RES}/mlflow/seed{{seed}}.json",
    log:
        log_path("track", "seed{seed}"),
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("track")
    resources:
        mem_mb=job_mem("track"),
        runtime=job_runtime("track"),
        disk_mb=job_disk("track"),
    params:
        records=lambda wc: track_records(wc.seed),
        uri=config["tracking"]["uri"],
        artifacts=config["tracking"]["artifacts"],
        experiment=f"xlalign/{NAME}",
        config_hash=CONFIG_HASH,
        config=config,
    script:
        "../scripts/track.py"
