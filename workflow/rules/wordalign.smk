# Word alignment of parallel text: a tokenised parallel corpus per language pair (the
# `segment` stage's tools), eflomal in both directions, symmetrisation and Wu & Dredze's
# filters, the table of aligned word pairs, and a dictionary read off the link counts,
# scored against the gold dictionaries where there are some.


rule parallel_corpus:
    input:
        unpack(parallel_inputs),
    output:
        tsv=f"{RES}/parallel/{{src}}-{{tgt}}/corpus.tsv",
        stats=f"{RES}/parallel/{{src}}-{{tgt}}/corpus.json",
    log:
        log_path("parallel_corpus", "{src}-{tgt}"),
    benchmark:
        bench_path("parallel_corpus", "{src}-{tgt}")
    wildcard_constraints:
        src=LANG_RE,
        tgt=LANG_RE,
    conda:
        f"{ENVS}/segment.yaml"
    threads: job_threads("parallel_corpus")
    resources:
        mem_mb=job_mem("parallel_corpus"),
        runtime=job_runtime("parallel_corpus"),
        disk_mb=job_disk("parallel_corpus"),
    params:
        sources=parallel_specs,
        tools=lambda wc: {
            lang: xlconfig.segment_tool(config, lang) for lang in (wc.src, wc.tgt)
        },
        fallback=config["segment"]["udpipe"]["fallback"],
        options=config["parallel"],
    script:
        "../scripts/parallel_corpus.py"


rule word_align:
    input:
        corpus=rules.parallel_corpus.output.tsv,
        priors=lambda wc: wordalign_priors(wc),
    output:
        fwd=f"{RES}/alignment/{{src}}-{{tgt}}/forward.txt",
        rev=f"{RES}/alignment/{{src}}-{{tgt}}/reverse.txt",
        sym=f"{RES}/alignment/{{src}}-{{tgt}}/symmetrized.txt",
        pairs=f"{RES}/alignment/{{src}}-{{tgt}}/pairs.tsv",
        stats=f"{RES}/alignment/{{src}}-{{tgt}}/stats.json",
    log:
        log_path("word_align", "{src}-{tgt}"),
    benchmark:
        bench_path("word_align", "{src}-{tgt}")
    wildcard_constraints:
        src=LANG_RE,
        tgt=LANG_RE,
    conda:
        f"{ENVS}/wordalign.yaml"
    # Unseeded, eflomal runs its samplers in parallel, one thread each; seeded, only the
    # two directions run in parallel (see xlalign.wordalign.eflomal).
    threads: job_threads("word_align")
    resources:
        mem_mb=job_mem("word_align"),
        runtime=job_runtime("word_align"),
        disk_mb=job_disk("word_align"),
    params:
        options=config["wordalign"],
        # Beside the job's output directory: {RES}/alignment/{src}-{tgt}.checkpoint
        checkpoint=lambda wc: str(
            Path(output_path(rules.word_align, "stats", **dict(wc.items()))).parent
        )
        + ".checkpoint",
    script:
        "../scripts/word_align.py"


rule alignment_dictionary:
    input:
        pairs=rules.word_align.output.pairs,
    output:
        txt=f"{RES}/dictionaries/alignment/{{src}}-{{tgt}}.txt",
        stats=f"{RES}/dictionaries/alignment/{{src}}-{{tgt}}.json",
    log:
        log_path("alignment_dictionary", "{src}-{tgt}"),
    benchmark:
        bench_path("alignment_dictionary", "{src}-{tgt}")
    wildcard_constraints:
        src=LANG_RE,
        tgt=LANG_RE,
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("alignment_dictionary")
    resources:
        mem_mb=job_mem("alignment_dictionary"),
        runtime=job_runtime("alignment_dictionary"),
        disk_mb=job_disk("alignment_dictionary"),
    params:
        options=config["wordalign"]["dictionary"],
    script:
        "../scripts/alignment_dictionary.py"


rule eval_alignment_dictionary:
    input:
        unpack(alignment_dictionary_gold),
        induced=output_path(rules.alignment_dictionary, "txt", src=HUB, tgt="{lang}"),
    output:
        stats=f"{RES}/eval/s{{sseed}}/alignment_dictionary/{HUB}-{{lang}}.json",
    log:
        log_path("eval_alignment_dictionary", "s{sseed}", "{lang}"),
    benchmark:
        bench_path("eval_alignment_dictionary", "s{sseed}", "{lang}")
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("eval_alignment_dictionary")
    resources:
        mem_mb=job_mem("eval_alignment_dictionary"),
        runtime=job_runtime("eval_alignment_dictionary"),
        disk_mb=job_disk("eval_alignment_dictionary"),
    params:
        lowercase=config["wordalign"]["dictionary"]["lowercase"],
    script:
        "../scripts/eval_alignment_dictionary.py"
