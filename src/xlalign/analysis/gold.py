"""Gold word alignments of the analyses: the package's hand-made English-German set
(``data/``, see its README; the embedded default's test set) and the public gold sets
(``analysis.gold.sets``: WPT 2003 en-fr, WPT 2005 ro-en and en-hi, KFTT ja-en, Tsinghua
zh-en), fetched by the download rules (``downloads.gold``) and read in their published
formats by :mod:`xlalign.core.formats.goldsets`, with the published AER figures they are
put beside."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.goldsets import GoldSet, read_awesome, read_wpt
from xlalign.wordalign.aer import Gold, read_gold

HANDMADE_STEM = "handmade-en-de"


def load_handmade_gold() -> tuple[list[list[str]], list[list[str]], Gold]:
    """(English sentences, German sentences, gold links) of the hand-made set: words
    split on spaces, gold as :func:`xlalign.wordalign.aer.read_gold` (sentence index ->
    (sure, possible)), checked to lie inside the sentences."""
    data = resources.files("xlalign.analysis") / "data"
    src = [line.split() for line in (data / f"{HANDMADE_STEM}.en").read_text("utf-8").splitlines()]
    tgt = [line.split() for line in (data / f"{HANDMADE_STEM}.de").read_text("utf-8").splitlines()]
    with resources.as_file(data / f"{HANDMADE_STEM}.gold") as path:
        gold = read_gold(path, fmt="pharaoh")
    if not len(src) == len(tgt) == len(gold):
        raise InputError(
            f"{HANDMADE_STEM}: {len(src)} English, {len(tgt)} German and {len(gold)} gold lines"
        )
    for k, (sure, possible) in gold.items():
        for i, j in possible | sure:
            if not (i < len(src[k]) and j < len(tgt[k])):
                raise InputError(f"{HANDMADE_STEM}.gold line {k + 1}: link {i}-{j} out of range")
    return src, tgt, gold


# --- the public gold sets (issue 29) -------------------------------------------------

#: Formats of ``analysis.gold.sets.<id>.format`` and the files each reads, in order.
SET_FORMATS = {
    "awesome": ("text (source ||| target)", "links"),
    "wpt": ("source text", "target text", "links"),
}

#: Published AER (percent) on the same test sets, for the analysis tables: awesome-align's
#: README (Dou & Neubig 2021, github.com/neulab/awesome-align, "Word Alignment" table),
#: eflomal and mBERT's softmax extraction without fine-tuning, by language pair (de-en is
#: not among the sets fetched here).
PUBLISHED_AER_SOURCE = (
    "awesome-align README (Dou & Neubig 2021), github.com/neulab/awesome-align: "
    "published figures, not computed here"
)
PUBLISHED_AER: dict[str, dict[str, float]] = {
    "eflomal": {"de-en": 22.6, "fr-en": 8.2, "ro-en": 25.1, "ja-en": 47.5, "zh-en": 28.7},
    "mBERT (softmax, not fine-tuned)": {
        "de-en": 17.4,
        "fr-en": 5.6,
        "ro-en": 27.9,
        "ja-en": 45.6,
        "zh-en": 18.1,
    },
}


def published_key(pair: str) -> str:
    """The README's name of a language pair: the non-English language first (``en-fr`` ->
    ``fr-en``), as its table writes them."""
    a, _, b = pair.partition("-")
    return f"{b}-{a}" if a == "en" and b else pair


def gold_download_file(source: str, name: str) -> str:
    """Where the download rule puts one file of a gold-set source (``downloads.gold``)."""
    return f"resources/download/gold/{source}/{name}"


def download_spec(cfg: Mapping[str, Any], source: str, name: str) -> dict[str, Any]:
    """URL, expected sha256 (or None), retries and timeout of one gold-set file, from
    ``downloads.gold.<source>`` (``{file}`` in its url is the file name)."""
    sources = (cfg.get("downloads") or {}).get("gold") or {}
    if source not in sources:
        raise ConfigError(
            f"downloads.gold.{source}: unknown gold-set source; known: "
            f"{', '.join(sorted(sources)) or 'none'}"
        )
    spec = sources[source]
    url = str(spec["url"]).format(file=name)
    if url.rsplit("/", 1)[-1] != name:
        raise ConfigError(
            f"downloads.gold.{source}.url gives {url!r}, whose file name is not {name!r}"
        )
    return {
        "url": url,
        "sha256": (spec.get("sha256") or {}).get(name),
        "retries": int(cfg["downloads"].get("retries", 5)),
        "timeout": float(cfg["downloads"].get("timeout", 60)),
    }


def configured_sets(cfg: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``analysis.gold.sets`` with each set's ``paths`` (the downloaded files, in the
    order its format reads them); a wrong number of files is a ConfigError."""
    out: dict[str, dict[str, Any]] = {}
    sets = ((cfg.get("analysis") or {}).get("gold") or {}).get("sets") or {}
    for sid, spec in sets.items():
        fmt = spec.get("format")
        if fmt not in SET_FORMATS:
            raise ConfigError(
                f"analysis.gold.sets.{sid}.format: {fmt!r}; expected one of "
                f"{', '.join(SET_FORMATS)}"
            )
        files = list(spec.get("files") or [])
        if len(files) != len(SET_FORMATS[fmt]):
            raise ConfigError(
                f"analysis.gold.sets.{sid}.files: the {fmt} format reads "
                f"{len(SET_FORMATS[fmt])} files ({', '.join(SET_FORMATS[fmt])}), got {files}"
            )
        source = str(spec["download"])
        known = (cfg.get("downloads") or {}).get("gold") or {}
        if source not in known:
            raise ConfigError(
                f"analysis.gold.sets.{sid}.download: {source!r} is not a source of "
                f"downloads.gold ({', '.join(sorted(known)) or 'none'})"
            )
        out[sid] = {
            **dict(spec),
            "paths": [gold_download_file(source, f) for f in files],
        }
    return out


def load_set(spec: Mapping[str, Any]) -> GoldSet:
    """The sentence pairs and links of one configured set (:func:`configured_sets`),
    read in its published format with its declared index base, every link checked."""
    fmt = spec["format"]
    paths = list(spec["paths"])
    base = int(spec["base"])
    drop = [int(n) for n in spec.get("drop_lines") or ()]
    if fmt == "awesome":
        g = read_awesome(paths[0], paths[1], base=base, drop_lines=drop)
    elif fmt == "wpt":
        g = read_wpt(paths[0], paths[1], paths[2], base=base, drop_lines=drop)
    else:
        raise ConfigError(f"gold set format {fmt!r}: expected one of {', '.join(SET_FORMATS)}")
    declared = spec.get("pairs")
    if declared is not None and len(g.src) != int(declared):
        raise InputError(
            f"{paths[0]}: {len(g.src)} sentence pairs; the set's `pairs` declares {declared}"
        )
    return g
