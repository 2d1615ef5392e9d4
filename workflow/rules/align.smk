# Cross-lingual mapping (paper section 3.1): gold dictionaries split into train/valid/test,
# VecMap mapping of every language into the hub's space (plus a pair file: the pair's own
# mapped spaces, where BLI, selection and induction retrieve), the paper's induced-dictionary
# route (an unsupervised VecMap space -> induced dictionaries), and per-language selection
# of the mapped or unmapped space by validation BLI (X2S-M -> X2S-MA).


rule split_dictionary:
    input:
        unpack(gold_dictionaries),
        hub_vocab=output_path(rules.vocab, "tsv", sseed="{sseed}", lang=HUB),
        vocab=rules.vocab.output.tsv,
    output:
        train=f"{RES}/dictionaries/s{{sseed}}/{{lang}}/train.txt",
        valid=f"{RES}/dictionaries/s{{sseed}}/{{lang}}/valid.txt",
        test=f"{RES}/dictionaries/s{{sseed}}/{{lang}}/test.txt",
        reverse_valid=f"{RES}/dictionaries/s{{sseed}}/{{lang}}/valid.reverse.txt",
        reverse_test=f"{RES}/dictionaries/s{{sseed}}/{{lang}}/test.reverse.txt",
        stats=f"{RES}/dictionaries/s{{sseed}}/{{lang}}/split.json",
    log:
        log_path("split_dictionary", "s{sseed}", "{lang}"),
    benchmark:
        bench_path("split_dictionary", "s{sseed}", "{lang}")
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("split_dictionary")
    resources:
        mem_mb=job_mem("split_dictionary"),
        runtime=job_runtime("split_dictionary"),
        disk_mb=job_disk("split_dictionary"),
    params:
        hub=HUB,
        options=config["dictionaries"]["split"],
    script:
        "../scripts/split_dictionary.py"


rule map_space:
    input:
        space=lambda wc: static_space(wc.method, wc.seed, wc.lang),
        hub=lambda wc: static_space(wc.method, wc.seed, HUB),
        dictionary=lambda wc: train_dictionary(wc.seed, wc.lang),
        heldout=lambda wc: (
            list(bli_dictionaries(wc.seed, wc.lang, "test").values())
            if wc.lang != HUB
            else []
        ),
    output:
        npy=f"{RES}/aligned/seed{{seed}}/{{method}}/{{lang}}.npy",
        words=f"{RES}/aligned/seed{{seed}}/{{method}}/{{lang}}.vocab.txt",
        manifest=f"{RES}/aligned/seed{{seed}}/{{method}}/{{lang}}.manifest.json",
        pair=f"{RES}/aligned/seed{{seed}}/{{method}}/{{lang}}.pair.npz",
        stats=f"{RES}/aligned/seed{{seed}}/{{method}}/{{lang}}.json",
    log:
        log_path("map_space", "seed{seed}", "{method}", "{lang}"),
    benchmark:
        bench_path("map_space", "seed{seed}", "{method}", "{lang}")
    wildcard_constraints:
        method="|".join(static_methods()),
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("map_space")
    resources:
        mem_mb=job_mem("map_space"),
        runtime=job_runtime("map_space"),
        disk_mb=job_disk("map_space"),
    params:
        hub=HUB,
        recipe=config["align"]["recipe"],
        options=config["align"]["options"],
        empty=config["align"]["empty_dictionary"],
        degenerate=config["align"]["degenerate_dictionary"],
        heldout=lambda wc: (
            bli_dictionaries(wc.seed, wc.lang, "test") if wc.lang != HUB else {}
        ),
        # A user-given gold file may contain test words (dropped or an error); an induced
        # dictionary carries no gold information (counted only); the split is disjoint.
        overlap=(
            config["dictionaries"]["split"]["overlap"]
            if config["align"]["dictionary"]["source"] == "file"
            else "report"
        ),
        # Self-learning's checkpoint, beside the outputs (not one: kept when the job fails).
        checkpoint=lambda wc: wp.sidecar(
            output_path(rules.map_space, "npy", **dict(wc.items())), ".checkpoint"
        ),
    script:
        "../scripts/map_space.py"


rule select_space:
    input:
        mapped=lambda wc: aligned_output(wc.space, "npy", wc.seed, wc.lang),
        mapped_pair=lambda wc: aligned_output(wc.space, "pair", wc.seed, wc.lang),
        unmapped=lambda wc: static_space(ALIGNED[wc.space], wc.seed, wc.lang),
        mapped_stats=lambda wc: aligned_output(wc.space, "stats", wc.seed, wc.lang),
        hub=lambda wc: aligned_output(wc.space, "npy", wc.seed, HUB),
        valid=lambda wc: (
            list(bli_dictionaries(wc.seed, wc.lang, "valid").values())
            if wc.lang != HUB
            else []
        ),
    output:
        vec=f"{RES}/spaces/seed{{seed}}/{{space}}/{{lang}}.vec",
        npy=f"{RES}/spaces/seed{{seed}}/{{space}}/{{lang}}.npy",
        words=f"{RES}/spaces/seed{{seed}}/{{space}}/{{lang}}.vocab.txt",
        manifest=f"{RES}/spaces/seed{{seed}}/{{space}}/{{lang}}.manifest.json",
        pair=f"{RES}/spaces/seed{{seed}}/{{space}}/{{lang}}.pair.npz",
        stats=f"{RES}/spaces/seed{{seed}}/{{space}}/{{lang}}.json",
    log:
        log_path("select_space", "seed{seed}", "{space}", "{lang}"),
    benchmark:
        bench_path("select_space", "seed{seed}", "{space}", "{lang}")
    wildcard_constraints:
        space="|".join(ALIGNED),
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("select_space")
    resources:
        mem_mb=job_mem("select_space"),
        runtime=job_runtime("select_space"),
        disk_mb=job_disk("select_space"),
    params:
        hub=HUB,
        valid=lambda wc: (
            bli_dictionaries(wc.seed, wc.lang, "valid") if wc.lang != HUB else {}
        ),
        selection=config["align"]["selection"],
        csls_k=config["evaluate"]["csls_k"],
        recipe=config["align"]["recipe"],
        options=config["align"]["options"],
    script:
        "../scripts/select_space.py"


# The paper's route: the induction space (fastText at full scale) mapped into the hub with
# unsupervised VecMap (no dictionary), then dictionaries induced from it.
rule map_unsupervised:
    input:
        space=lambda wc: induction_source(wc.seed, wc.lang),
        hub=lambda wc: induction_source(wc.seed, HUB),
    output:
        npy=f"{RES}/spaces/seed{{seed}}/{UNSUP}/{{lang}}.npy",
        words=f"{RES}/spaces/seed{{seed}}/{UNSUP}/{{lang}}.vocab.txt",
        manifest=f"{RES}/spaces/seed{{seed}}/{UNSUP}/{{lang}}.manifest.json",
        pair=f"{RES}/spaces/seed{{seed}}/{UNSUP}/{{lang}}.pair.npz",
        stats=f"{RES}/spaces/seed{{seed}}/{UNSUP}/{{lang}}.json",
    log:
        log_path("map_unsupervised", "seed{seed}", "{lang}"),
    benchmark:
        bench_path("map_unsupervised", "seed{seed}", "{lang}")
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("map_unsupervised")
    resources:
        mem_mb=job_mem("map_unsupervised"),
        runtime=job_runtime("map_unsupervised"),
        disk_mb=job_disk("map_unsupervised"),
    params:
        hub=HUB,
        induce=config["align"]["induce"],
        degenerate=config["align"]["degenerate_dictionary"],
        checkpoint=lambda wc: wp.sidecar(
            output_path(rules.map_unsupervised, "npy", **dict(wc.items())),
            ".checkpoint",
        ),
    script:
        "../scripts/map_unsupervised.py"


rule induce_dictionary:
    input:
        pair=rules.map_unsupervised.output.pair,
        hub=output_path(rules.map_unsupervised, "npy", seed="{seed}", lang=HUB),
    output:
        dic=f"{RES}/dictionaries/induced/seed{{seed}}/{{lang}}.txt",
        stats=f"{RES}/dictionaries/induced/seed{{seed}}/{{lang}}.json",
    log:
        log_path("induce_dictionary", "seed{seed}", "{lang}"),
    benchmark:
        bench_path("induce_dictionary", "seed{seed}", "{lang}")
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("induce_dictionary")
    resources:
        mem_mb=job_mem("induce_dictionary"),
        runtime=job_runtime("induce_dictionary"),
        disk_mb=job_disk("induce_dictionary"),
    params:
        hub=HUB,
        induce=config["align"]["induce"],
    script:
        "../scripts/induce_dictionary.py"
