# Alignment analyses (xlalign.analysis) of the encoder, its continued pre-training
# checkpoints and their fine-tuned versions: word alignment from each layer (argmax and
# optimal transport) scored by AER against gold links (004 section 4.4) with eflomal's
# links as the reference point, the word alignment score by layer and its Spearman
# correlation with zero-shot transfer across encoders (001), and L2 distances of related
# and unrelated word pairs (003 section 5.4). With analysis.gold.sets (full scale), the
# public gold sets are fetched by download_gold_file (pinned URLs, sha256) and every
# encoder and eflomal is scored on each (xlalign.analysis.gold).
rule download_gold_file:
    output:
        xlgold.gold_download_file("{gsource}", "{gfile}"),
    log:
        "logs/download/gold/{gsource}/{gfile}.log",
    benchmark:
        "logs/download/gold/{gsource}/{gfile}.benchmark.tsv"
    wildcard_constraints:
        gsource="|".join(re.escape(s) for s in config["downloads"]["gold"]) or "none",
        gfile="[^/]+",
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_gold_file")
    resources:
        mem_mb=job_mem("download_gold_file"),
        runtime=job_runtime("download_gold_file"),
        disk_mb=job_disk("download_gold_file"),
    params:
        dl=lambda wc: xlgold.download_spec(config, wc.gsource, wc.gfile),
    script:
        "../scripts/download.py"


rule analyse_encoder:
    input:
        unpack(lambda wc: analysis_inputs(wc.aenc)),
        gold=gold_set_files(),
    output:
        stats=f"{RES}/analysis/encoders/{{aenc}}.json",
    log:
        log_path("analyse_encoder", "{aenc}"),
    benchmark:
        bench_path("analyse_encoder", "{aenc}")
    wildcard_constraints:
        aenc="|".join(re.escape(e) for e in AN_ENCODERS) or "none",
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("analyse_encoder")
    resources:
        mem_mb=job_mem("analyse_encoder"),
        runtime=job_runtime("analyse_encoder"),
        disk_mb=job_disk("analyse_encoder"),
        gpu=job_gpu("analyse_encoder"),
    params:
        encoder=lambda wc: analysis_encoder_dir(wc.aenc),
        gold=AN["gold"]["source"],
        sets=GOLD_SETS,
        gold_format=AN["gold"]["format"],
        gold_base=AN["gold"]["base"],
        methods=AN["methods"],
        distances=distance_files(),
        settings=AN["distances"],
        device=AN["device"],
    script:
        "../scripts/analyse_encoder.py"


rule eflomal_reference:
    input:
        unpack(eflomal_reference_inputs),
    output:
        stats=f"{RES}/analysis/eflomal_reference.json",
    log:
        log_path("eflomal_reference", "all"),
    benchmark:
        bench_path("eflomal_reference", "all")
    conda:
        f"{ENVS}/wordalign.yaml"
    threads: job_threads("eflomal_reference")
    resources:
        mem_mb=job_mem("eflomal_reference"),
        runtime=job_runtime("eflomal_reference"),
        disk_mb=job_disk("eflomal_reference"),
    params:
        gold=AN["gold"]["source"],
        sets=GOLD_SETS,
        # (set id, swapped) of each file of input.corpora, in order
        corpora=lambda wc: [
            [sid, swap] for sid, (_, swap) in gold_set_corpora().items()
        ],
        gold_format=AN["gold"]["format"],
        gold_base=AN["gold"]["base"],
        wordalign=config["wordalign"],
        seed=config["wordalign"]["seed"],
        max_pairs=AN["eflomal"]["max_pairs"],
    script:
        "../scripts/eflomal_reference.py"


rule analysis_tables:
    input:
        encoders=[
            output_path(rules.analyse_encoder, "stats", aenc=e) for e in AN_ENCODERS
        ],
        reference=rules.eflomal_reference.output.stats,
        # the zero-shot results of the encoders before fine-tuning (transfer, for the
        # alignment/transfer correlation by layer)
        runs=[
            output_path(rules.finetune, "stats", encoder=e, task=t, ftseed=s)
            for e in AN_ENCODERS
            if e in ZS_ENCODERS
            for t in ZS_TASKS
            for s in ZS_SEEDS
        ],
    output:
        md=f"{RES}/tables/analysis.md",
        html=report(
            f"{RES}/tables/analysis.html",
            caption="../report/analysis.rst",
            category="Analyses",
            subcategory="Alignment",
            labels={"table": "AER by layer and L2 distances"},
        ),
        tex=f"{RES}/tables/analysis.tex",
        summary=f"{RES}/tables/analysis.json",
        figures=report(
            directory(f"{RES}/figures/analysis"),
            patterns=["{name}.png"],
            caption="../report/analysis.rst",
            category="Analyses",
            subcategory="Alignment",
            labels={"figure": "{name}"},
        ),
    log:
        log_path("analysis_tables", "all"),
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("analysis_tables")
    resources:
        mem_mb=job_mem("analysis_tables"),
        runtime=job_runtime("analysis_tables"),
        disk_mb=job_disk("analysis_tables"),
    params:
        # the languages the continued pre-training trains on (a note on the gold sets
        # with others)
        languages=LANGS,
    script:
        "../scripts/analysis_tables.py"
