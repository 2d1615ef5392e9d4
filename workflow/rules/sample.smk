# Stage `sample`: up to corpus.max_sentences sentences per language, whole paragraphs,
# deterministic by the sampling seed, streaming over the configured sources.


rule sample:
    input:
        source_files,
    output:
        txt=f"{RES}/corpus/s{{sseed}}/sample/{{lang}}.txt",
        stats=f"{RES}/corpus/s{{sseed}}/sample/{{lang}}.json",
    log:
        log_path("sample", "s{sseed}", "{lang}"),
    benchmark:
        bench_path("sample", "s{sseed}", "{lang}")
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("sample")
    resources:
        mem_mb=job_mem("sample"),
        runtime=job_runtime("sample"),
        disk_mb=job_disk("sample"),
    params:
        sources=lambda wc: xlconfig.sources_for(config, wc.lang),
        max_sentences=lambda wc: xlconfig.max_sentences_for(config, wc.lang),
        strategy=config["corpus"]["strategy"],
        max_paragraphs_scanned=config["corpus"]["max_paragraphs_scanned"],
    script:
        "../scripts/sample.py"
