# Threads and resources: estimated from the config (xlalign.workflow.resources).
# Each rule takes its threads (job_threads) and its mem_mb, runtime in minutes, disk_mb
# (and gpu for the encoder jobs) from these, so that a cluster run asks for what this
# config needs; mem_mb and runtime grow with the attempt (retries). Partitions, accounts
# and GPU models stay in profiles/.


def _read_encoder_config():
    """The encoder's config.json when it is there already (its exact width and depth)."""
    import json

    path = Path(wp.encoder_dir(config), "config.json")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


ENCODER_HF_CONFIG = _read_encoder_config()


def _size_mb(path):
    """Size of a file in MB, None when it is not there (yet)."""
    p = Path(path)
    return p.stat().st_size / 1e6 if p.is_file() else None


def job_sizes(rule_name, wildcards):
    """Sizes of the inputs that drive a job's cost and exist already (else the estimate
    uses the config's bounds). Without `input`, so that a dry run shows numbers, not
    <TBD>; a retry (attempt 2) sees the files the first attempt's upstream jobs made."""
    wc = dict(wildcards.items())
    if rule_name == "sample":
        return {"sources_mb": [_size_mb(p) for p in source_files(wildcards)]}
    if rule_name == "parallel_corpus":
        specs = parallel_specs(wildcards)
        return {"sources_mb": [_size_mb(spec["paths"][0]) for spec in specs]}
    if rule_name == "word_align":
        return {"corpus_mb": _size_mb(output_path(rules.parallel_corpus, "tsv", **wc))}
    if rule_name == "eflomal_reference":
        if GOLD_SETS:
            corpora = {sid: c for sid, (c, _) in gold_set_corpora().items()}
        else:
            corpora = {"gold": eflomal_reference_inputs(wildcards)["corpus"]}
        return {"corpora_mb": {sid: _size_mb(c) for sid, c in corpora.items()}}
    if rule_name == "alignment_dictionary":
        return {"pairs_mb": _size_mb(output_path(rules.word_align, "pairs", **wc))}
    if rule_name == "track":
        return {"records": len(track_records(int(wc["seed"])))}
    return {}


def job_threads(rule_name):
    return jobsize.threads(rule_name, config)


def _submitted_threads(rule_name):
    """Threads given to the jobs of `rule_name` on a cluster, i.e. its own, or the
    profile's `set-threads`, capped by `max-threads`. Not Snakemake's `threads` argument, which
    `--cores` caps too (at 1 in any dry run), so that a dry run shows what is submitted.
    """
    settings = workflow.resource_settings
    n = settings.overwrite_threads.get(rule_name, None)
    n = getattr(n, "value", n)
    if not isinstance(n, int):
        n = job_threads(rule_name)
    if settings.max_threads:
        n = min(n, settings.max_threads)
    return max(1, n)


def _submitted_gpus(rule_name):
    """GPUs of the jobs of `rule_name`: the profile's `set-resources` value if it gives
    one (e.g. 4 for data-parallel x2static, 0 on a CPU-only cluster), else the rule's.
    """
    over = workflow.resource_settings.overwrite_resources.get(rule_name) or {}
    n = over.get("gpu") if hasattr(over, "get") else None
    n = getattr(n, "value", n)
    return n if isinstance(n, int) else jobsize.gpus(rule_name, config)


def _job_estimate(rule_name, wildcards, attempt):
    return jobsize.estimate(
        rule_name,
        config,
        attempt=attempt,
        n_threads=_submitted_threads(rule_name),
        n_gpus=_submitted_gpus(rule_name),
        wildcards=dict(wildcards.items()),
        sizes=job_sizes(rule_name, wildcards),
        hf_config=ENCODER_HF_CONFIG,
    )


def job_mem(rule_name):
    """`mem_mb` of a rule's jobs (MB), times the attempt."""
    return lambda wildcards, attempt: _job_estimate(
        rule_name, wildcards, attempt
    ).mem_mb


def job_runtime(rule_name):
    """`runtime` of a rule's jobs (minutes) on their threads (and GPU), times the attempt."""
    return lambda wildcards, attempt: _job_estimate(
        rule_name, wildcards, attempt
    ).runtime


def job_disk(rule_name):
    """`disk_mb` of a rule's jobs: their outputs and temporary files (MB)."""
    return lambda wildcards, attempt: _job_estimate(
        rule_name, wildcards, attempt
    ).disk_mb


def job_gpu(rule_name):
    """`gpu` of the encoder jobs: 1 with a full-size encoder, 0 with the embedded one."""
    return jobsize.gpus(rule_name, config)
