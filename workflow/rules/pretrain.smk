# Continued pre-training of the encoder (xlalign.pretrain): one job per run (a row of the
# papers' tables: mlm, x2s-ma-mse, x2s-ma-dcca, ...) x pre-training seed, each writing a
# transformers checkpoint directory that the zero-shot stage evaluates as `<run>.s<seed>`.


rule pretrain_text:
    # Separate MLM text per language (pretrain.text.from: sources; the paper: 100k
    # Wikipedia paragraphs), sampled as the corpus is.
    input:
        lambda wc: [
            wp.source_file(src, wc.lang, config)
            for src in config["pretrain"]["text"]["sources"][wc.lang]
        ],
    output:
        txt=f"{RES}/pretrain/text/s{{sseed}}/{{lang}}.txt",
        stats=f"{RES}/pretrain/text/s{{sseed}}/{{lang}}.json",
    log:
        log_path("pretrain_text", "s{sseed}", "{lang}"),
    benchmark:
        bench_path("pretrain_text", "s{sseed}", "{lang}")
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("pretrain_text")
    resources:
        mem_mb=job_mem("pretrain_text"),
        runtime=job_runtime("pretrain_text"),
        disk_mb=job_disk("pretrain_text"),
    params:
        sources=lambda wc: config["pretrain"]["text"]["sources"][wc.lang],
        max_sentences=config["pretrain"]["text"]["max_paragraphs"],
        strategy=config["corpus"]["strategy"],
        max_paragraphs_scanned=config["corpus"]["max_paragraphs_scanned"],
    script:
        "../scripts/sample.py"


rule pretrain:
    input:
        unpack(lambda wc: pretrain_inputs(wc.run, wc.seed)),
        encoder=ENCODER_DIR,
    output:
        model=directory(f"{RES}/pretrain/{{run}}/s{{seed}}"),
        stats=f"{RES}/pretrain/{{run}}/s{{seed}}.json",
    log:
        log_path("pretrain", "{run}", "s{seed}"),
    benchmark:
        bench_path("pretrain", "{run}", "s{seed}")
    wildcard_constraints:
        run="|".join(PT_RUNS) or "none",
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("pretrain")
    resources:
        mem_mb=job_mem("pretrain"),
        runtime=job_runtime("pretrain"),
        disk_mb=job_disk("pretrain"),
        gpu=job_gpu("pretrain"),
    params:
        objectives=lambda wc: xlrecipes.row_objectives(config, wc.run),
        files=lambda wc: pretrain_files(wc.run, wc.seed),
        # Checkpoints to resume from after a kill: beside the outputs, not among them
        # (Snakemake removes a failed job's outputs), deleted when the run succeeds.
        work_dir=lambda wc: f"{RES}/pretrain/{wc.run}/s{wc.seed}.work",
        settings=pretrain_settings(),
        validation_paragraphs=config["pretrain"]["text"]["validation_paragraphs"],
        validation_max_sequences=config["pretrain"]["text"]["validation_max_sequences"],
        hub=HUB,
        device=config["pretrain"]["device"],
        precision=config["pretrain"]["precision"],
    script:
        "../scripts/pretrain.py"
