# Full-scale sources, fetched over HTTP(S) into resources/download: resumable (.part files
# and Range requests), retried with back-off, checked against sha256 where the config
# knows it, renamed into place only when complete. `snakemake downloads` fetches them all.


rule downloads:
    input:
        wp.download_targets(config),
    # A target only (see `all`).
    resources:
        disk_mb=0,


rule download_cc100:
    output:
        wp.cc100_file("{lang}"),
    log:
        "logs/download/cc100/{lang}.log",
    benchmark:
        "logs/download/cc100/{lang}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_cc100")
    resources:
        mem_mb=job_mem("download_cc100"),
        runtime=job_runtime("download_cc100"),
        disk_mb=job_disk("download_cc100"),
    params:
        dl=lambda wc: download_params(
            "cc100", lang=wc.lang, code=wp_cc100_code(wc.lang)
        ),
    script:
        "../scripts/download.py"


rule download_wikipedia:
    output:
        wp.wikipedia_file("{lang}"),
    log:
        "logs/download/wikipedia/{lang}.log",
    benchmark:
        "logs/download/wikipedia/{lang}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_wikipedia")
    resources:
        mem_mb=job_mem("download_wikipedia"),
        runtime=job_runtime("download_wikipedia"),
        disk_mb=job_disk("download_wikipedia"),
    params:
        dl=lambda wc: download_params("wikipedia", lang=wc.lang),
    script:
        "../scripts/download.py"


rule download_muse:
    output:
        wp.muse_file("{src}", "{tgt}", "{split}"),
    log:
        "logs/download/muse/{src}-{tgt}{split}.log",
    benchmark:
        "logs/download/muse/{src}-{tgt}{split}.benchmark.tsv"
    wildcard_constraints:
        src="[a-z]{2}",
        tgt="[a-z]{2}",
        split="|\\.0-5000|\\.5000-6500",
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_muse")
    resources:
        mem_mb=job_mem("download_muse"),
        runtime=job_runtime("download_muse"),
        disk_mb=job_disk("download_muse"),
    params:
        dl=lambda wc: download_params("muse", src=wc.src, tgt=wc.tgt, split=wc.split),
    script:
        "../scripts/download.py"


rule download_semeval2017:
    output:
        wp.semeval_file(),
    log:
        "logs/download/semeval2017.log",
    benchmark:
        "logs/download/semeval2017.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_semeval2017")
    resources:
        mem_mb=job_mem("download_semeval2017"),
        runtime=job_runtime("download_semeval2017"),
        disk_mb=job_disk("download_semeval2017"),
    params:
        dl=download_params("semeval2017"),
    script:
        "../scripts/download.py"


rule download_fasttext:
    output:
        wp.fasttext_file("{lang}"),
    log:
        "logs/download/fasttext/{lang}.log",
    benchmark:
        "logs/download/fasttext/{lang}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_fasttext")
    resources:
        mem_mb=job_mem("download_fasttext"),
        runtime=job_runtime("download_fasttext"),
        disk_mb=job_disk("download_fasttext"),
    params:
        dl=lambda wc: download_params("fasttext", lang=wc.lang),
    script:
        "../scripts/download.py"


# OPUS-100 (Zhang et al. 2020): English-centred, pair directories named in alphabetical
# order (de-en, en-zh), one line-aligned file per language and split.
rule download_opus100:
    output:
        wp.opus100_file("{pair}", "{split}", "{lang}"),
    log:
        "logs/download/opus100/{pair}-{split}.{lang}.log",
    benchmark:
        "logs/download/opus100/{pair}-{split}.{lang}.benchmark.tsv"
    wildcard_constraints:
        pair="[a-z]{2,3}-[a-z]{2,3}",
        split="train|dev|test",
        lang="[a-z]{2,3}",
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_opus100")
    resources:
        mem_mb=job_mem("download_opus100"),
        runtime=job_runtime("download_opus100"),
        disk_mb=job_disk("download_opus100"),
    params:
        dl=lambda wc: download_params(
            "opus100", pair=wc.pair, split=wc.split, lang=wc.lang
        ),
    script:
        "../scripts/download.py"


# WikiMatrix (Schwenk et al. 2021): mined pairs with their LASER margin score, one gzipped
# TSV per pair named in alphabetical order.
rule download_wikimatrix:
    output:
        wp.wikimatrix_file("{pair}"),
    log:
        "logs/download/wikimatrix/{pair}.log",
    benchmark:
        "logs/download/wikimatrix/{pair}.benchmark.tsv"
    wildcard_constraints:
        pair="[a-z]{2,3}-[a-z]{2,3}",
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_wikimatrix")
    resources:
        mem_mb=job_mem("download_wikimatrix"),
        runtime=job_runtime("download_wikimatrix"),
        disk_mb=job_disk("download_wikimatrix"),
    params:
        dl=lambda wc: download_params("wikimatrix", pair=wc.pair),
    script:
        "../scripts/download.py"


rule download_udpipe:
    output:
        wp.udpipe_file("{lang}"),
    log:
        "logs/download/udpipe/{lang}.log",
    benchmark:
        "logs/download/udpipe/{lang}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_udpipe")
    resources:
        mem_mb=job_mem("download_udpipe"),
        runtime=job_runtime("download_udpipe"),
        disk_mb=job_disk("download_udpipe"),
    params:
        dl=lambda wc: download_params("udpipe", filename=udpipe_filename(wc.lang)),
    script:
        "../scripts/download.py"


rule download_hf_model:
    output:
        directory(wp.hf_model_dir("{slug}", "{revision}")),
    log:
        "logs/download/huggingface/{slug}@{revision}.log",
    benchmark:
        "logs/download/huggingface/{slug}@{revision}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_hf_model")
    resources:
        mem_mb=job_mem("download_hf_model"),
        runtime=job_runtime("download_hf_model"),
        disk_mb=job_disk("download_hf_model"),
    params:
        repo=lambda wc: wc.slug.replace("--", "/"),
        revision=lambda wc: wc.revision,
        endpoint=config["downloads"]["huggingface"]["endpoint"],
        retries=config["downloads"]["retries"],
        timeout=config["downloads"]["timeout"],
    script:
        "../scripts/download_hf_model.py"
