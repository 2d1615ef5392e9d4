# Zero-shot cross-lingual evaluation of encoders (XTREME style; xlalign.evaluation.tasks):
# fine-tune on English and test on every other language, one job per encoder x task x
# fine-tuning seed; sentence retrieval without fine-tuning, one job per encoder over all its
# sets; the paper's Table 3 shape and per-language Tables 8-12 from whatever ran.
from xlalign.config import taskdata


rule finetune:
    input:
        unpack(lambda wc: finetune_inputs(wc.task)),
        unpack(lambda wc: continual_inputs(wc.encoder)),
        encoder=lambda wc: ZS_FT_ENCODERS[wc.encoder],
    output:
        # predictions/<lang>.jsonl of every evaluated split, and the selected model (kept
        # with zeroshot.keep_model)
        run=directory(f"{RES}/zeroshot/{{encoder}}/{{task}}/ft{{ftseed}}"),
        stats=f"{RES}/zeroshot/{{encoder}}/{{task}}/ft{{ftseed}}.json",
    log:
        log_path("finetune", "{encoder}", "{task}", "ft{ftseed}"),
    benchmark:
        bench_path("finetune", "{encoder}", "{task}", "ft{ftseed}")
    wildcard_constraints:
        task="|".join(ZS_TASKS) or "none",
        encoder=ZS_FT_ENCODER_RE or "none",
        ftseed=r"\d+",
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("finetune")
    resources:
        mem_mb=job_mem("finetune"),
        runtime=job_runtime("finetune"),
        disk_mb=job_disk("finetune"),
        gpu=job_gpu("finetune"),
    params:
        splits=lambda wc: finetune_splits(wc.task),
        tests=lambda wc: finetune_tests(wc.task),
        params=lambda wc: finetune_params(wc.encoder, wc.task),
        continual=lambda wc: continual_spec(wc.encoder),
        # Checkpoints to resume from after a kill: beside the outputs, not among them
        # (Snakemake removes a failed job's outputs), deleted when the run succeeds;
        # written every checkpoints.interval_minutes of work (and on SIGTERM) only; the
        # script reads the interval from the config (a param would be a rerun trigger).
        work_dir=lambda wc: f"{RES}/zeroshot/{wc.encoder}/{wc.task}/ft{wc.ftseed}.work",
        device=config["zeroshot"]["device"],
        precision=config["zeroshot"]["precision"],
        # the analyses read the encoders fine-tuned on analysis.distances.finetuned
        keep_model=lambda wc: config["zeroshot"]["keep_model"]
        or (wc.task in AN_FINETUNED and f"{wc.encoder}@{wc.task}" in AN_ENCODERS),
    script:
        "../scripts/finetune.py"


# One job per encoder for every retrieval set: the encoder, its tokenizer and the imports
# are paid once, and an English side that several languages share is encoded once. Each
# set's outputs are those of a job of its own (same paths, same bytes), written as the set
# finishes; naming one of them as a target runs the encoder's job.
rule retrieve:
    input:
        sets=[f for rset in ZS_RETRIEVAL for f in retrieval_inputs(rset)["sets"]],
        encoder=lambda wc: ZS_ENCODERS[wc.encoder],
    output:
        # per set: the predictions folder and the results JSON (what the tables read)
        predictions=directory(
            expand(
                f"{RES}/zeroshot/{{encoder}}/retrieval/{{rset}}",
                rset=ZS_RETRIEVAL,
                allow_missing=True,
            )
        ),
        results=expand(
            f"{RES}/zeroshot/{{encoder}}/retrieval/{{rset}}.json",
            rset=ZS_RETRIEVAL,
            allow_missing=True,
        ),
        # the job's summary (every set's results), mirrored into MLflow
        stats=f"{RES}/zeroshot/{{encoder}}/retrieval.json",
    log:
        log_path("retrieve", "{encoder}"),
    benchmark:
        bench_path("retrieve", "{encoder}")
    wildcard_constraints:
        encoder=ZS_ENCODER_RE or "none",
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("retrieve")
    resources:
        mem_mb=job_mem("retrieve"),
        runtime=job_runtime("retrieve"),
        disk_mb=job_disk("retrieve"),
        gpu=job_gpu("retrieve"),
    params:
        sets={
            rset: {
                "languages": spec["languages"],
                "max_pairs": spec["max_pairs"],
                "files": retrieval_files(rset),
            }
            for rset, spec in config["zeroshot"]["retrieval"]["sets"].items()
        },
        settings={
            k: config["zeroshot"]["retrieval"][k]
            for k in (
                "layer",
                "pooling",
                "include_special",
                "batch_size",
                "max_length",
            )
        },
        # MTEB's scoring: its sets and this encoder's prompt and pooling
        mteb=lambda wc: taskdata.mteb_settings(
            config["zeroshot"]["retrieval"]["mteb"], wc.encoder
        ),
        device=config["zeroshot"]["device"],
        # Each set's progress, to resume from after a kill: beside the outputs, not among
        # them (Snakemake removes a failed job's outputs); removed when the job succeeds.
        work_dir=lambda wc: f"{RES}/zeroshot/{wc.encoder}/retrieval.work",
    script:
        "../scripts/retrieve.py"


rule zeroshot_tables:
    input:
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
    output:
        md=f"{RES}/tables/zeroshot.md",
        # The same tables as a page for the Snakemake report (workflow/report/README.md).
        html=report(
            f"{RES}/tables/zeroshot.html",
            caption="../report/zeroshot.rst",
            category="Zero-shot",
            subcategory="Tables",
            labels={
                "tables": "3, 8-12, retrieval by layer",
                "models": len(ZS_FT_ENCODERS),
                "fine-tuning seeds": ", ".join(map(str, ZS_SEEDS)),
            },
        ),
        # Not `stats`: the tables' own summary, not a job to mirror into MLflow.
        summary=f"{RES}/tables/zeroshot.json",
    log:
        log_path("zeroshot_tables", "all"),
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("zeroshot_tables")
    resources:
        mem_mb=job_mem("zeroshot_tables"),
        runtime=job_runtime("zeroshot_tables"),
        disk_mb=job_disk("zeroshot_tables"),
    params:
        encoders=list(ZS_FT_ENCODERS),
        tasks=ZS_TASKS,
        retrieval=ZS_RETRIEVAL,
    script:
        "../scripts/zeroshot_tables.py"
