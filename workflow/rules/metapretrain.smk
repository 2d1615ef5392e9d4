# Meta-pretraining (004, xlalign.metapretrain): a monolingual English BERT pre-trained from
# scratch (meta_mono), cross-lingual models initialised from it by vocabulary matching as
# 004 Table 5's variants and pre-trained on every language with rebalanced sampling
# (meta_cross), their zero-shot POS and retrieval by layer (meta_evaluate), and the table
# and figure (meta_tables).


rule meta_mono:
    input:
        text=lambda wc: pretrain_text_file(SEEDS[0], HUB),
    output:
        model=directory(f"{RES}/meta/mono.s{{mpseed}}"),
        stats=f"{RES}/meta/mono.s{{mpseed}}.json",
    log:
        log_path("meta_mono", "s{mpseed}"),
    benchmark:
        bench_path("meta_mono", "s{mpseed}")
    wildcard_constraints:
        mpseed="|".join(map(str, MP_SEEDS)),
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("meta_mono")
    resources:
        mem_mb=job_mem("meta_mono"),
        runtime=job_runtime("meta_mono"),
        disk_mb=job_disk("meta_mono"),
        gpu=job_gpu("meta_mono"),
    params:
        vocab_size=MP["mono"]["vocab_size"],
        steps=MP["mono"]["steps"],
        arch=MP["arch"],
        section=MP["pretrain"],
        work_dir=lambda wc: f"{RES}/meta/mono.s{wc.mpseed}.work",
        device=MP["device"],
    script:
        "../scripts/meta_mono.py"


rule meta_cross:
    input:
        mono=rules.meta_mono.output.model,
        texts=lambda wc: [pretrain_text_file(SEEDS[0], lang) for lang in LANGS],
        dictionaries=lambda wc: (
            [split_dictionary_file(SEEDS[0], lang, "train") for lang in OTHERS]
            if "dict" in wc.variant
            else []
        ),
    output:
        model=directory(f"{RES}/meta/cross/{{variant}}.s{{mpseed}}"),
        stats=f"{RES}/meta/cross/{{variant}}.s{{mpseed}}.json",
    log:
        log_path("meta_cross", "{variant}.s{mpseed}"),
    benchmark:
        bench_path("meta_cross", "{variant}.s{mpseed}")
    wildcard_constraints:
        variant="|".join(re.escape(v) for v in MP_VARIANTS) or "none",
        mpseed="|".join(map(str, MP_SEEDS)),
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("meta_cross")
    resources:
        mem_mb=job_mem("meta_cross"),
        runtime=job_runtime("meta_cross"),
        disk_mb=job_disk("meta_cross"),
        gpu=job_gpu("meta_cross"),
    params:
        texts={lang: pretrain_text_file(SEEDS[0], lang) for lang in LANGS},
        dictionaries={
            lang: split_dictionary_file(SEEDS[0], lang, "train") for lang in OTHERS
        },
        vocab_size=MP["cross"]["vocab_size"],
        steps=MP["cross"]["steps"],
        language_alpha=MP["cross"]["language_alpha"],
        section=MP["pretrain"],
        work_dir=lambda wc: f"{RES}/meta/cross/{wc.variant}.s{wc.mpseed}.work",
        device=MP["device"],
    script:
        "../scripts/meta_cross.py"


rule meta_evaluate:
    input:
        model=rules.meta_cross.output.model,
        stats=rules.meta_cross.output.stats,
        tasks=lambda wc: [
            f
            for t in MP["evaluate"]["tasks"]
            for v in finetune_inputs(t).values()
            for f in (v if isinstance(v, list) else [v])
        ],
        retrieval=lambda wc: [
            f for r in MP["evaluate"]["retrieval"] for f in retrieval_inputs(r)["sets"]
        ],
    output:
        stats=f"{RES}/meta/eval/{{variant}}.s{{mpseed}}.json",
    log:
        log_path("meta_evaluate", "{variant}.s{mpseed}"),
    benchmark:
        bench_path("meta_evaluate", "{variant}.s{mpseed}")
    wildcard_constraints:
        variant="|".join(re.escape(v) for v in MP_VARIANTS) or "none",
        mpseed="|".join(map(str, MP_SEEDS)),
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("meta_evaluate")
    resources:
        mem_mb=job_mem("meta_evaluate"),
        runtime=job_runtime("meta_evaluate"),
        disk_mb=job_disk("meta_evaluate"),
        gpu=job_gpu("meta_evaluate"),
    params:
        tasks={
            t: {
                **finetune_splits(t),
                "tests": {
                    lang: f for lang, f in finetune_tests(t).items() if lang != HUB
                },
                "params": config["zeroshot"]["tasks"][t]["params"],
            }
            for t in (MP["evaluate"]["tasks"] if MP_VARIANTS else [])
        },
        retrieval={
            r: {
                lang: wp.task_split_file(r, lang, "test")
                for lang in config["zeroshot"]["retrieval"]["sets"][r]["languages"]
            }
            for r in (MP["evaluate"]["retrieval"] if MP_VARIANTS else [])
        },
        work_dir=lambda wc: f"{RES}/meta/eval/{wc.variant}.s{wc.mpseed}.work",
        device=MP["device"],
    script:
        "../scripts/meta_evaluate.py"


rule meta_tables:
    input:
        evals=[
            output_path(rules.meta_evaluate, "stats", variant=v, mpseed=s)
            for v in MP_VARIANTS
            for s in MP_SEEDS
        ],
    output:
        md=f"{RES}/tables/metapretrain.md",
        html=report(
            f"{RES}/tables/metapretrain.html",
            caption="../report/metapretrain.rst",
            category="Analyses",
            subcategory="Meta-pretraining",
            labels={"table": "004 Table 5 analogue"},
        ),
        tex=f"{RES}/tables/metapretrain.tex",
        summary=f"{RES}/tables/metapretrain.json",
        figures=report(
            directory(f"{RES}/figures/metapretrain"),
            patterns=["{name}.png"],
            caption="../report/metapretrain.rst",
            category="Analyses",
            subcategory="Meta-pretraining",
            labels={"figure": "{name}"},
        ),
    log:
        log_path("meta_tables", "all"),
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("meta_tables")
    resources:
        mem_mb=job_mem("meta_tables"),
        runtime=job_runtime("meta_tables"),
        disk_mb=job_disk("meta_tables"),
    script:
        "../scripts/meta_tables.py"
