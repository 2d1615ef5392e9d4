# Lexical evaluation (paper section 3.2): BLI against the hub in both directions (MUSE
# conventions, NN and CSLS), word similarity (SemEval-2017 Task 2, English sets), and the
# paper's Tables 1, 2, 5, 6 and 7 over every compared space and seed.


rule bli:
    input:
        space=lambda wc: space_file(wc.space, wc.seed, wc.lang),
        hub=lambda wc: space_file(wc.space, wc.seed, HUB),
        dictionaries=lambda wc: list(
            bli_dictionaries(wc.seed, wc.lang, "test").values()
        ),
        # A mapped space is scored in the pair's own mapped spaces (VecMap's protocol).
        pair=lambda wc: (
            [space_output(wc.space, "pair", wc.seed, wc.lang)]
            if wc.space in ALIGNED or wc.space == UNSUP
            else []
        ),
        alignment=lambda wc: (
            [space_output(wc.space, "stats", wc.seed, wc.lang)]
            if wc.space in ALIGNED or wc.space == UNSUP
            else []
        ),
    output:
        stats=f"{RES}/eval/seed{{seed}}/bli/{{space}}/{{lang}}.json",
    log:
        log_path("bli", "seed{seed}", "{space}", "{lang}"),
    benchmark:
        bench_path("bli", "seed{seed}", "{space}", "{lang}")
    wildcard_constraints:
        space="|".join(SPACES) or "none",
        lang="|".join(OTHERS) or "none",
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("bli")
    resources:
        mem_mb=job_mem("bli"),
        runtime=job_runtime("bli"),
        disk_mb=job_disk("bli"),
    params:
        hub=HUB,
        dictionaries=lambda wc: bli_dictionaries(wc.seed, wc.lang, "test"),
        retrieval=config["evaluate"]["retrieval"],
        csls_k=config["evaluate"]["csls_k"],
        ks=config["evaluate"]["ks"],
        oov=config["evaluate"]["oov"],
    script:
        "../scripts/bli.py"


rule wordsim:
    input:
        unpack(lambda wc: wordsim_inputs()),
        spaces=lambda wc: [space_file(wc.space, wc.seed, lang) for lang in LANGS],
    output:
        stats=f"{RES}/eval/seed{{seed}}/wordsim/{{space}}.json",
    log:
        log_path("wordsim", "seed{seed}", "{space}"),
    benchmark:
        bench_path("wordsim", "seed{seed}", "{space}")
    wildcard_constraints:
        space="|".join(SPACES) or "none",
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("wordsim")
    resources:
        mem_mb=job_mem("wordsim"),
        runtime=job_runtime("wordsim"),
        disk_mb=job_disk("wordsim"),
    params:
        languages=LANGS,
        english_sets=config["evaluate"]["wordsim"]["english_sets"],
        compose=config["evaluate"]["wordsim"]["compose"],
    script:
        "../scripts/wordsim.py"


rule tables:
    input:
        bli=[
            bli_record(seed, space, lang)
            for seed in SEEDS
            for space in SPACES
            for lang in OTHERS
        ],
        wordsim=(
            [wordsim_record(seed, space) for seed in SEEDS for space in SPACES]
            if wordsim_wanted()
            else []
        ),
        selection=[
            space_output(space, "stats", seed, lang)
            for seed in SEEDS
            for space in ALIGNED
            if space in SPACES
            for lang in LANGS
        ],
    output:
        md=f"{RES}/tables/tables.md",
        # The same tables as a page for the Snakemake report (workflow/report/README.md).
        html=report(
            f"{RES}/tables/tables.html",
            caption="../report/tables.rst",
            category="Lexical",
            subcategory="Tables",
            labels={
                "tables": "1, 2, 5, 6, 7",
                "seeds": ", ".join(map(str, SEEDS)),
            },
        ),
        # Not `stats`: the tables' own summary, not a job to mirror into MLflow.
        summary=f"{RES}/tables/tables.json",
    log:
        log_path("tables", "all"),
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("tables")
    resources:
        mem_mb=job_mem("tables"),
        runtime=job_runtime("tables"),
        disk_mb=job_disk("tables"),
    params:
        spaces=SPACES,
        metric=config["evaluate"]["tables"]["metric"],
        retrieval=config["evaluate"]["tables"]["retrieval"],
        # Which gold dictionaries the BLI test sets come from (MUSE's, or a split of others).
        dictionaries=config["dictionaries"]["sources"]
        + (["user files"] if config["dictionaries"]["files"] else []),
    script:
        "../scripts/tables.py"
