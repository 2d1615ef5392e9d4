# Results as researchers read them (xlalign.reporting): seeds aggregated and every model
# tested against its baseline (statistics), the figures (plots), both mirrored into MLflow
# (track_results), and all of it in the Snakemake report (workflow/report).


rule statistics:
    input:
        runs=[
            output_path(rules.finetune, "stats", encoder=enc, task=task, ftseed=s)
            for enc in ZS_FT_ENCODERS
            for task in ZS_TASKS
            for s in ZS_SEEDS
        ],
        # The per-example predictions the tests read, beside each stats file.
        predictions=[
            output_path(rules.finetune, "run", encoder=enc, task=task, ftseed=s)
            for enc in ZS_FT_ENCODERS
            for task in ZS_TASKS
            for s in ZS_SEEDS
        ]
        + [
            retrieval_output("predictions", encoder=enc, rset=rset)
            for enc in ZS_ENCODERS
            for rset in ZS_RETRIEVAL
        ],
        retrieval=[
            retrieval_output("results", encoder=enc, rset=rset)
            for enc in ZS_ENCODERS
            for rset in ZS_RETRIEVAL
        ],
        bli=[
            bli_record(seed, space, lang)
            for seed in SEEDS
            for space in SPACES
            for lang in OTHERS
        ],
    output:
        md=f"{RES}/tables/statistics.md",
        html=report(
            f"{RES}/tables/statistics.html",
            caption="../report/statistics.rst",
            category="Significance",
            subcategory="Tables",
            labels={
                "tables": "1 and 3 with p-values",
                "seeds": ", ".join(map(str, SEEDS)),
            },
        ),
        # Not `stats`: the tables' own summary, not a job to mirror into MLflow.
        summary=f"{RES}/tables/statistics.json",
    log:
        log_path("statistics", "all"),
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("statistics")
    resources:
        mem_mb=job_mem("statistics"),
        runtime=job_runtime("statistics"),
        disk_mb=job_disk("statistics"),
    params:
        encoders=list(ZS_FT_ENCODERS),
        base_encoder=wp.model_slug(config["encoder"]["name"]),
        pretrain_runs=PT_RUNS,
        tasks=ZS_TASKS,
        retrieval_sets=ZS_RETRIEVAL,
        spaces=SPACES,
        bli_baseline=config["results"]["bli_baseline"],
        bli_retrieval=config["evaluate"]["tables"]["retrieval"],
        significance=config["results"]["significance"],
    script:
        "../scripts/statistics.py"


rule plots:
    input:
        bli=[
            bli_record(seed, space, lang)
            for seed in SEEDS
            for space in SPACES
            for lang in OTHERS
        ],
        runs=[
            output_path(rules.finetune, "stats", encoder=enc, task=task, ftseed=s)
            for enc in ZS_FT_ENCODERS
            for task in ZS_TASKS
            for s in ZS_SEEDS
        ],
        retrieval=[
            retrieval_output("results", encoder=enc, rset=rset)
            for enc in ZS_ENCODERS
            for rset in ZS_RETRIEVAL
        ],
        pretrain=[
            output_path(rules.pretrain, "stats", run=run, seed=seed)
            for run in PT_RUNS
            for seed in PT_SEEDS
        ],
        learning_curve=(
            [config["results"]["learning_curve"]]
            if config["results"]["learning_curve"]
            else []
        ),
    output:
        plots=report(
            directory(f"{RES}/plots"),
            patterns=["{figure}.png"],
            caption="../report/plots.rst",
            category="Figures",
            subcategory="Plots",
            labels={"figure": "{figure}"},
        ),
    log:
        log_path("plots", "all"),
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("plots")
    resources:
        mem_mb=job_mem("plots"),
        runtime=job_runtime("plots"),
        disk_mb=job_disk("plots"),
    params:
        spaces=SPACES,
        base_encoder=wp.model_slug(config["encoder"]["name"]),
        tasks=ZS_TASKS,
        metric=config["evaluate"]["tables"]["metric"],
        bli_retrieval=config["evaluate"]["tables"]["retrieval"],
    script:
        "../scripts/plots.py"


localrules:
    track_results,


rule track_results:
    # The configuration's aggregates on their own MLflow parent run (seed tag "all"), with
    # the tables and figures as artifacts; after the per-seed mirrors (one store writer at a
    # time: the store's file lock).
    input:
        statistics=rules.statistics.output.summary,
        tables=[
            rules.statistics.output.md,
            *zeroshot_targets(),
            *([rules.tables.output.md] if SPACES else []),
        ],
        plots=rules.plots.output.plots,
        # issue 17's tables, figures and summaries (derived, metapretrain, analysis)
        analyses=[str(Path(md).with_suffix(".json")) for md in analyses_targets()],
        seeds=[output_path(rules.track, "summary", seed=seed) for seed in SEEDS],
    output:
        summary=f"{RES}/mlflow/aggregates.json",
    log:
        log_path("track_results", "all"),
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("track_results")
    resources:
        mem_mb=job_mem("track_results"),
        runtime=job_runtime("track_results"),
        disk_mb=job_disk("track_results"),
    params:
        uri=config["tracking"]["uri"],
        artifacts=config["tracking"]["artifacts"],
        experiment=f"xlalign/{NAME}",
        config_hash=CONFIG_HASH,
        name=NAME,
        # The folder of every table file (the rules above write beside their .md).
        tables_dir=lambda wc, input: str(Path(input.statistics).parent),
        figures_dir=f"{RES}/figures",
    script:
        "../scripts/track_results.py"
