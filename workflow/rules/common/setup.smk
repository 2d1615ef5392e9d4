# Set-up, included first: the library on the path, the configuration (loaded and validated
# before any job runs), the constants the rules share and the global wildcard constraints.
import re
import sys
from pathlib import Path

# The library (src/xlalign) is found one way: src/ on the path. For this parse, on sys.path;
# for the jobs, on PYTHONPATH, exported by the prefix of every command Snakemake runs, so
# that it holds inside each rule's conda env too (`--sdm conda` removes an inherited
# PYTHONPATH) and on a cluster (each job step parses this file again).
SRC = str(Path(workflow.basedir, "src").resolve())
sys.path.insert(0, SRC)
shell.prefix(
    ("set -euo pipefail; " if Path(shell.get_executable() or "").name == "bash" else "")
    + "export PYTHONPATH={SRC:q}${{PYTHONPATH:+:$PYTHONPATH}}; "
)

from xlalign import config as xlconfig  # noqa: E402
from xlalign.workflow import resources as jobsize  # noqa: E402
from xlalign.workflow import paths as wp  # noqa: E402
from xlalign.workflow import manifest  # noqa: E402
from xlalign.core.errors import ConfigError  # noqa: E402
from xlalign.pretrain import recipes as xlrecipes  # noqa: E402
from xlalign.analysis import gold as xlgold  # noqa: E402
from xlalign.derived import naming as xlnaming  # noqa: E402

# The configuration: `--configfile` (e.g. config/paper.yaml) *replaces* the embedded
# default config/config.yaml instead of being merged into it.
# Every file is read again with the strict reader that `xlalign check-config` uses
# (Snakemake's own loader keeps the last of a repeated key), so both refuse the same files.
from xlalign.config.yamlio import read_config_file  # noqa: E402

try:
    if not workflow.overwrite_configfiles:
        # No --configfile: the embedded default, with any --config key=value on top.
        from snakemake.utils import update_config

        _default = Path("config/config.yaml")
        if not _default.exists():
            _default = Path(workflow.basedir) / "config" / "config.yaml"
        _base = read_config_file(_default)
        update_config(_base, dict(config))
        config.clear()
        config.update(_base)
        _origin = str(_default)
    else:
        # What the strict reader reads, merged as Snakemake merges --configfile files, then
        # --config on top: the values check-config sees (Snakemake's loader would expand
        # YTE templates, for one).
        from snakemake.utils import update_config

        _read = {}
        for _file in workflow.overwrite_configfiles:
            update_config(_read, read_config_file(_file))
        update_config(_read, dict(workflow.config_settings.config))
        config.clear()
        config.update(_read)
        _origin = ", ".join(map(str, workflow.overwrite_configfiles))
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

# The lexical stage: dictionaries, mapping, selection, evaluation.
HUB = config["align"]["hub"]
OTHERS = [lang for lang in LANGS if lang != HUB]
SPACES = xlconfig.compared_spaces(config)
ALIGNED = {xlconfig.aligned_name(m): m for m in xlconfig.static_methods(config)}
UNSUP = xlconfig.induction_space_name(config)

# Word alignment of parallel text.
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


wildcard_constraints:
    lang="|".join(sorted(set(LANGS))),
    seed="|".join(str(s) for s in SEEDS),
    sseed="|".join(str(s) for s in SAMPLE_SEEDS),


# --- what the configuration asks for -------------------------------------------------------


def static_methods():
    """Static-embedding methods the configuration asks for."""
    return xlconfig.static_methods(config)


def sample_seed(seed):
    """The sampling seed of the corpus a training seed uses."""
    return xlconfig.sample_seed_for(config, int(seed))


def has_gold_dictionaries(lang):
    return bool(
        config["dictionaries"]["sources"] or lang in config["dictionaries"]["files"]
    )


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


def lo_package(lang):
    from xlalign.resources.catalog import debian_package

    return debian_package(lang)


def freedict_pkg(src, tgt):
    """The Debian package holding src->tgt (possibly the reverse dictionary, inverted)."""
    from xlalign.resources.catalog import freedict_source

    return freedict_source(src, tgt)[0]


def debian_archive(wildcards):
    """No input: the check, while the DAG is built (before any job runs), that a Debian
    archive is known when a deb_package job is needed (embedded.debian or the machine's
    apt configuration); otherwise the run stops with one message naming the setting."""
    from xlalign.resources.debian import debian_sources

    try:
        debian_sources(config["embedded"]["debian"])
    except ConfigError as exc:
        raise WorkflowError(str(exc)) from None
    return []


def package_members(registry, name):
    """The member patterns later jobs read from a registry package (None: all of it)."""
    from xlalign.resources.catalog import package_members as catalog_members

    found = catalog_members(registry, name)
    return None if found is None else list(found)


# Zero-shot evaluation: the encoders it evaluates (name -> checkpoint directory: the
# configured encoder and the continued pre-training outputs), fine-tuned tasks, retrieval
# sets and fine-tuning seeds (kept apart from SEEDS).
ENCODER_DIR = wp.encoder_dir(config)
ZS_ENCODERS = {wp.model_slug(config["encoder"]["name"]): ENCODER_DIR}
# Continued pre-training: runs (rows of the papers' tables) x pre-training seeds, each
# checkpoint evaluated by the zero-shot stage as `<run>.s<seed>`.
PT_RUNS = xlrecipes.runs(config)
PT_SEEDS = config["pretrain"]["seeds"]
for _run in PT_RUNS:
    for _seed in PT_SEEDS:
        ZS_ENCODERS[xlrecipes.encoder_key(_run, _seed)] = (
            f"{RES}/pretrain/{_run}/s{_seed}"
        )
# Continual learning (003): every encoder once more per `zeroshot.continual` entry, its
# alignment loss added to the task loss during fine-tuning, as `<encoder>+<entry>`
# (fine-tuned tasks only: retrieval has no fine-tuning).
ZS_CONTINUAL = config["zeroshot"]["continual"]
ZS_FT_ENCODERS = dict(ZS_ENCODERS)
for _name in ZS_CONTINUAL:
    for _enc, _dir in ZS_ENCODERS.items():
        ZS_FT_ENCODERS[f"{_enc}+{_name}"] = _dir
ZS_ENCODER_RE = "|".join(re.escape(name) for name in ZS_ENCODERS)
ZS_FT_ENCODER_RE = "|".join(re.escape(name) for name in ZS_FT_ENCODERS)
ZS_TASKS = list(config["zeroshot"]["tasks"])
ZS_RETRIEVAL = list(config["zeroshot"]["retrieval"]["sets"])
ZS_SEEDS = config["zeroshot"]["seeds"]

# Derived languages (001): pre-training rows x compositions x seeds, each a small BERT
# trained from scratch on English + the derived language, named `<run>.<spec>.s<seed>`.
DV = config["derived"]
DV_SPECS = DV["transformations"] if DV["enabled"] else []
DV_RUNS = DV["runs"] if DV["enabled"] else []
DV_SEEDS = DV["seeds"]
DV_TASKS = list(DV["tasks"])
# 001's Tables 1-2: extra runs (`tlm-p10`, `dict-mlm-d50`) of DV_RUNS' rows on one spec.
DV_SWEEP_SPEC = DV["sweeps"]["spec"] if DV_SPECS else None
DV_SWEEP_RUNS = (
    xlnaming.sweep_runs(
        DV_RUNS,
        parallel=DV["sweeps"]["parallel"],
        dictionary=DV["sweeps"]["dictionary"],
        base_dictionary=DV["dictionary_fraction"],
    )
    if DV_SWEEP_SPEC
    else []
)
# Every (run, spec) pre-trained: each base run on each composition, the sweeps on theirs.
DV_COMBOS = [(r, s) for r in DV_RUNS for s in DV_SPECS] + [
    (r, DV_SWEEP_SPEC) for r in DV_SWEEP_RUNS
]
# Meta-pretraining (004): the initialisation variants of the cross-lingual model.
MP = config["metapretrain"]
MP_VARIANTS = MP["variants"] if MP["enabled"] else []
MP_SEEDS = MP["seeds"]
# Alignment analyses (003's original, adjusted, fine-tuned and continually trained
# encoders): every zero-shot encoder, and each fine-tuned encoder (with continual learning
# too) on the tasks of analysis.distances.finetuned as `<encoder>@<task>` (their weights
# are kept).
AN = config["analysis"]
# The public gold sets (issue 29): set id -> spec with the downloaded files' paths.
GOLD_SETS = xlgold.configured_sets(config)
AN_ENCODERS = dict(ZS_ENCODERS) if AN["enabled"] else {}
AN_FINETUNED = (
    [t for t in AN["distances"]["finetuned"] if t in ZS_TASKS] if AN["enabled"] else []
)
for _task in AN_FINETUNED:
    for _enc in ZS_FT_ENCODERS:  # continual-learning runs (`<encoder>+<entry>`) too
        AN_ENCODERS[f"{_enc}@{_task}"] = None
