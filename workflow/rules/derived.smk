# Derived languages (001, xlalign.derived): English and a derived copy of it per
# composition of transliteration, inversion and syntax (derived_data), a small BERT
# pre-trained from scratch on both with each row (derived_pretrain), fine-tuned on the
# natural or the derived side (ZS, SUP) with the alignment scores of its embeddings and
# layers (derived_evaluate), and 001's Table 3 / Figures 2-3 with the Spearman correlation
# of alignment and transfer, and Tables 1-2 from the runs of `derived.sweeps`
# (derived_tables).


rule derived_data:
    input:
        text=lambda wc: pretrain_text_file(SEEDS[0], HUB),
        tasks=lambda wc: derived_task_inputs(),
    output:
        data=directory(f"{RES}/derived/data/{{spec}}"),
        stats=f"{RES}/derived/data/{{spec}}.json",
    log:
        log_path("derived_data", "{spec}"),
    benchmark:
        bench_path("derived_data", "{spec}")
    wildcard_constraints:
        spec="|".join(re.escape(s) for s in DV_SPECS) or "none",
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("derived_data")
    resources:
        mem_mb=job_mem("derived_data"),
        runtime=job_runtime("derived_data"),
        disk_mb=job_disk("derived_data"),
    params:
        tasks=lambda wc: {t: finetune_splits(t) for t in DV_TASKS},
        task_settings={t: DV["tasks"][t] for t in DV_TASKS},
        max_paragraphs=DV["max_paragraphs"],
        dictionary_fraction=DV["dictionary_fraction"],
        dictionary_fractions=lambda wc: (
            DV["sweeps"]["dictionary"] if wc.spec == DV_SWEEP_SPEC else []
        ),
        parallel_fractions=lambda wc: (
            DV["sweeps"]["parallel"] if wc.spec == DV_SWEEP_SPEC else []
        ),
        syntax=DV["syntax"],
        seed=config["corpus"]["seed"],
    script:
        "../scripts/derived_data.py"


rule derived_pretrain:
    input:
        data=rules.derived_data.output.data,
    output:
        model=directory(f"{RES}/derived/models/{{dvrun}}.{{spec}}.s{{dvseed}}"),
        stats=f"{RES}/derived/models/{{dvrun}}.{{spec}}.s{{dvseed}}.json",
    log:
        log_path("derived_pretrain", "{dvrun}.{spec}.s{dvseed}"),
    benchmark:
        bench_path("derived_pretrain", "{dvrun}.{spec}.s{dvseed}")
    wildcard_constraints:
        dvrun="|".join(re.escape(r) for r in [*DV_RUNS, *DV_SWEEP_RUNS]) or "none",
        spec="|".join(re.escape(s) for s in DV_SPECS) or "none",
        dvseed="|".join(map(str, DV_SEEDS)),
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("derived_pretrain")
    resources:
        mem_mb=job_mem("derived_pretrain"),
        runtime=job_runtime("derived_pretrain"),
        disk_mb=job_disk("derived_pretrain"),
        gpu=job_gpu("derived_pretrain"),
    params:
        vocab_size=DV["vocab_size"],
        arch=DV["arch"],
        section=DV["pretrain"],
        work_dir=lambda wc: f"{RES}/derived/models/{wc.dvrun}.{wc.spec}.s{wc.dvseed}.work",
        device=DV["device"],
    script:
        "../scripts/derived_pretrain.py"


rule derived_evaluate:
    input:
        model=rules.derived_pretrain.output.model,
        pretrain=rules.derived_pretrain.output.stats,
        data=rules.derived_data.output.data,
    output:
        stats=f"{RES}/derived/eval/{{dvrun}}.{{spec}}.s{{dvseed}}.json",
    log:
        log_path("derived_evaluate", "{dvrun}.{spec}.s{dvseed}"),
    benchmark:
        bench_path("derived_evaluate", "{dvrun}.{spec}.s{dvseed}")
    wildcard_constraints:
        dvrun="|".join(re.escape(r) for r in [*DV_RUNS, *DV_SWEEP_RUNS]) or "none",
        spec="|".join(re.escape(s) for s in DV_SPECS) or "none",
        dvseed="|".join(map(str, DV_SEEDS)),
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("derived_evaluate")
    resources:
        mem_mb=job_mem("derived_evaluate"),
        runtime=job_runtime("derived_evaluate"),
        disk_mb=job_disk("derived_evaluate"),
        gpu=job_gpu("derived_evaluate"),
    params:
        tasks=DV_TASKS,
        task_settings={t: DV["tasks"][t] for t in DV_TASKS},
        work_dir=lambda wc: f"{RES}/derived/eval/{wc.dvrun}.{wc.spec}.s{wc.dvseed}.work",
        device=DV["device"],
    script:
        "../scripts/derived_evaluate.py"


rule derived_tables:
    input:
        evals=[
            output_path(rules.derived_evaluate, "stats", dvrun=r, spec=s, dvseed=seed)
            for r, s in DV_COMBOS
            for seed in DV_SEEDS
        ],
    output:
        md=f"{RES}/tables/derived.md",
        html=report(
            f"{RES}/tables/derived.html",
            caption="../report/derived.rst",
            category="Analyses",
            subcategory="Derived languages",
            labels={"table": "001 Table 3 analogue"},
        ),
        tex=f"{RES}/tables/derived.tex",
        summary=f"{RES}/tables/derived.json",
        figures=report(
            directory(f"{RES}/figures/derived"),
            patterns=["{name}.png"],
            caption="../report/derived.rst",
            category="Analyses",
            subcategory="Derived languages",
            labels={"figure": "{name}"},
        ),
    log:
        log_path("derived_tables", "all"),
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("derived_tables")
    resources:
        mem_mb=job_mem("derived_tables"),
        runtime=job_runtime("derived_tables"),
        disk_mb=job_disk("derived_tables"),
    params:
        tasks=DV_TASKS,
        sweep_spec=DV_SWEEP_SPEC,
    script:
        "../scripts/derived_tables.py"
