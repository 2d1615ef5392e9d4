# The learning curve of X2S-M against aggregation (xlalign.learning_curve.curve): BLI of
# both methods at seeded subsets of a language's corpus and at the whole of it (the run's
# spaces), unmapped and mapped into the hub as the run maps, on the run's test split. No
# encoder runs here: X2S-M trains from a view of the teacher cache, and the teacher's pass
# left each size's aggregation sums (a cache built before without them: the sizes'
# sampled sentences are encoded here). Each size's scores are kept beside the output as
# they finish (the work directory, not an output): a killed job skips them on the re-run.


rule learning_curve:
    input:
        txt=lambda wc: segment_txt(wc.seed, wc.lang),
        cache=lambda wc: teacher_cache(wc.seed, wc.lang),
        vocab=lambda wc: vocab_tsv(wc.seed, wc.lang),
        encoder=wp.encoder_dir(config),
        x2s=lambda wc: static_space("x2s-m", wc.seed, wc.lang),
        agg=lambda wc: static_space("aggregate", wc.seed, wc.lang),
        hub_x2s=lambda wc: static_space("x2s-m", wc.seed, HUB),
        hub_agg=lambda wc: static_space("aggregate", wc.seed, HUB),
        dictionary=lambda wc: train_dictionary(wc.seed, wc.lang),
        test=lambda wc: list(bli_dictionaries(wc.seed, wc.lang, "test").values()),
    output:
        stats=f"{RES}/learning_curve/seed{{seed}}/{{lang}}.json",
        md=f"{RES}/learning_curve/seed{{seed}}/{{lang}}.md",
        figure=report(
            f"{RES}/figures/learning_curve/seed{{seed}}/{{lang}}.png",
            caption="../report/learning_curve.rst",
            category="Lexical",
            subcategory="Learning curve",
            labels={"language": "{lang}", "seed": "{seed}"},
        ),
    log:
        log_path("learning_curve", "seed{seed}", "{lang}"),
    benchmark:
        bench_path("learning_curve", "seed{seed}", "{lang}")
    wildcard_constraints:
        lang="|".join(config["learning_curve"]["languages"]) or "^$",
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("learning_curve")
    resources:
        mem_mb=job_mem("learning_curve"),
        runtime=job_runtime("learning_curve"),
        disk_mb=job_disk("learning_curve"),
        gpu=job_gpu("learning_curve"),
    params:
        hub=HUB,
        name=NAME,
        test=lambda wc: bli_dictionaries(wc.seed, wc.lang, "test"),
        fractions=config["learning_curve"]["fractions"],
        subset_seed=config["learning_curve"]["seed"],
        vocab=config["extract"]["vocab"],
        x2static={
            k: config["extract"][k]
            for k in ("epochs", "batch_sentences", "negatives", "subsample_t", "lr")
        },
        aggregation={
            "layer": config["extract"]["layer"],
            "pooling": config["extract"]["pooling"],
            "max_length": config["extract"]["max_length"],
            "max_contexts": config["extract"]["aggregation"]["max_contexts"],
            "batch_tokens": config["extract"]["batch_tokens"],
        },
        align={
            "recipe": config["align"]["recipe"],
            "options": config["align"]["options"],
            "empty": config["align"]["empty_dictionary"],
            "degenerate": config["align"]["degenerate_dictionary"],
        },
        retrieval=config["evaluate"]["retrieval"],
        csls_k=config["evaluate"]["csls_k"],
        figure_retrieval=config["evaluate"]["tables"]["retrieval"],
        # each size's scores as they finish (not an output: kept when the job fails)
        work=lambda wc: wp.sidecar(
            output_path(rules.learning_curve, "stats", **dict(wc.items())), ".sizes"
        ),
    script:
        "../scripts/learning_curve.py"
