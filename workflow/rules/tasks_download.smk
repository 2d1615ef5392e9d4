# Zero-shot tasks at full scale: the official files of XTREME's datasets, fetched one file
# per job into resources/download/tasks/<dataset>/<file> (resumable, retried, checked
# against downloads.tasks.<dataset>.sha256 where known), then turned into the records of
# one task in one language, resources/tasks/<task>/<lang>/{train,dev,test}.jsonl +
# stats.json (English: train, dev, test; other languages: test, and dev where the dataset
# has one). Which files a (task, language) needs, their URLs and checksums come from
# xlalign.evaluation.tasks.official and the `downloads.tasks` section of the config.
# Needs from the includes before it: `wp`, `ENVS`, `job_threads`/`job_mem`/`job_runtime`/
# `job_disk` (workflow/rules/common).
from xlalign.evaluation.tasks import official as task_data


rule download_task_file:
    output:
        wp.task_download_file("{dataset}", "{file}"),
    log:
        "logs/download/tasks/{dataset}/{file}.log",
    benchmark:
        "logs/download/tasks/{dataset}/{file}.benchmark.tsv"
    wildcard_constraints:
        dataset="|".join(sorted(task_data.DATASETS)),
        file="[^/]+",
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("download_task_file")
    resources:
        mem_mb=job_mem("download_task_file"),
        runtime=job_runtime("download_task_file"),
        disk_mb=job_disk("download_task_file"),
    params:
        dl=lambda wc: task_data.download_spec(config, wc.dataset, wc.file),
    script:
        "../scripts/download_task.py"


rule prepare_task:
    input:
        lambda wc: [
            wp.task_download_file(dataset, name)
            for dataset, name in task_data.source_files(config, wc.task, wc.lang)
        ],
    output:
        dir=directory(wp.task_dir("{task}", "{lang}")),
    log:
        "logs/tasks/prepare/{task}/{lang}.log",
    benchmark:
        "logs/tasks/prepare/{task}/{lang}.benchmark.tsv"
    wildcard_constraints:
        task="|".join(task_data.TASKS),
        lang="[a-z]{2,3}",
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("prepare_task")
    resources:
        mem_mb=job_mem("prepare_task"),
        runtime=job_runtime("prepare_task"),
        disk_mb=job_disk("prepare_task"),
    params:
        options=lambda wc: task_data.prepare_options(wc.task),
    script:
        "../scripts/prepare_task.py"
