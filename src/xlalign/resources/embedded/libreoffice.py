"""LibreOffice help pages (Debian ``libreoffice-help-<x>``, MPL-2.0) as a unit TSV.

Every help page exists in every language under the same relative path, and its
paragraphs and headings carry ids that survive translation (``par_id3146957``,
``hd_id3147291``). A unit is one such block, with the id ``relpath#block-id``, so the
units of two languages join into parallel text. Whole documents are held out by a
stable hash of their relative path, so the same pages are held out in every language.

Skipped: page chrome (header, index, footer, debug info), scripts, code samples,
"how to get" and "related topics" boxes, and blocks embedded from other pages (they carry
the other page's ids, so they would be duplicates). Inline platform/application switches
(``switchinline``) keep one variant: the default one, else the first.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from tqdm import tqdm

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike
from xlalign.resources.catalog import LIBREOFFICE_PACKAGES, debian_package
from xlalign.resources.embedded.bible import Unit, normalise_text, write_units

log = logging.getLogger(__name__)

HELP_ROOT = Path("usr/share/libreoffice/help")


def help_dir(extracted_root: PathLike, lang: str) -> Path:
    """``usr/share/libreoffice/help/<code>`` inside an extracted help package of ``lang``."""
    debian_package(lang)
    code = LIBREOFFICE_PACKAGES[lang][1]
    base = Path(extracted_root) / HELP_ROOT
    direct = base / code
    if direct.is_dir():
        return direct
    if base.is_dir():  # tolerate a different letter case (en-us, zh-cn)
        for d in sorted(base.iterdir()):
            if d.is_dir() and d.name.lower() == code.lower():
                return d
    found = sorted(d.name for d in base.iterdir() if d.is_dir()) if base.is_dir() else []
    raise InputError(
        f"{direct}: help directory of language {lang!r} not found (extract "
        f"{debian_package(lang)} into {extracted_root} with the deb_package rule); "
        f"found: {', '.join(found) or 'nothing'}"
    )


def is_heldout(relpath: str, fraction: float, salt: str = "xlalign") -> bool:
    """Whether document ``relpath`` is held out: sha1(salt + relpath) below ``fraction``.

    Depends on the relative path only, so the same documents are held out in every language.
    """
    digest = hashlib.sha1((salt + relpath).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


# --------------------------------------------------------------------------------------
# HTML -> blocks
# --------------------------------------------------------------------------------------

_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
_UNIT_TAGS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "li", "dt", "dd"})
#: Inside a unit these start a new line of text (a space is inserted).
_BREAKS = _UNIT_TAGS | {"br", "div", "tr", "table", "ul", "ol", "dl", "pre", "section"}
_SKIP_TAGS = frozenset(
    "head title script style noscript header footer aside nav button label input select "
    "textarea pre code svg template iframe object".split()
)
_SKIP_CLASSES = frozenset(
    {
        "embedded",  # blocks embedded from other pages (and their "how to get" commands)
        "howtoget",
        "howtogetheader",
        "howtogetbody",
        "relatedtopics",
        "relatedbody",
        "related",
        "bascode",
        "pycode",
        "sqlcode",
        "code",
        "codeintable",
        "smathcode",
        "debug",
        "bug",
    }
)
_SKIP_IDS = frozenset({"TopLeftHeader", "DEBUG", "SearchFrame", "DonationFrame", "Contents"})


@dataclass
class _Node:
    tag: str
    attrs: dict[str, str]
    children: list[_Node | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class _TreeBuilder(HTMLParser):
    """A forgiving element tree from :class:`html.parser.HTMLParser` events."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#root", {})
        self._stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, {k: v or "" for k, v in attrs})
        self._stack[-1].children.append(node)
        if tag not in _VOID:
            self._stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._stack[-1].children.append(_Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self._stack) - 1, 0, -1):
            if self._stack[i].tag == tag:
                del self._stack[i:]
                return  # an end tag without an open element is ignored

    def handle_data(self, data: str) -> None:
        self._stack[-1].children.append(data)


def _skipped(node: _Node) -> bool:
    return (
        node.tag in _SKIP_TAGS
        or bool(node.classes & _SKIP_CLASSES)
        or node.attrs.get("id", "") in _SKIP_IDS
    )


def _is_unit(node: _Node) -> bool:
    uid = node.attrs.get("id", "")
    return node.tag in _UNIT_TAGS and bool(uid) and not uid.startswith("bm_")


def _switch_choice(node: _Node) -> _Node | None:
    """The variant of an inline switch to keep: the default one, else the first."""
    variants = [c for c in node.children if isinstance(c, _Node)]
    for v in variants:
        if v.attrs.get("id", "").startswith("default"):
            return v
    return variants[0] if variants else None


def _inline_text(node: _Node, out: list[str]) -> None:
    for child in node.children:
        if isinstance(child, str):
            out.append(child)
            continue
        if _skipped(child) or _is_unit(child):  # nested units are units of their own
            out.append(" ")
            continue
        if "switchinline" in child.classes:
            chosen = _switch_choice(child)
            if chosen is not None:
                _inline_text(chosen, out)
            continue
        brk = child.tag in _BREAKS
        if brk:
            out.append(" ")
        _inline_text(child, out)
        if brk:
            out.append(" ")


def _walk(node: _Node) -> Iterator[tuple[str, str]]:
    for child in node.children:
        if isinstance(child, str) or _skipped(child):
            continue
        if _is_unit(child):
            parts: list[str] = []
            _inline_text(child, parts)
            yield child.attrs["id"], "".join(parts)
        yield from _walk(child)


def extract_blocks(html: str) -> list[tuple[str, str]]:
    """``(block id, raw text)`` of the content blocks of one help page, in page order."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return list(_walk(builder.root))


# --------------------------------------------------------------------------------------
# Builder
# --------------------------------------------------------------------------------------


def list_documents(hdir: Path) -> list[str]:
    """Relative paths (``/``-separated) of the help pages under ``hdir/text``, sorted.

    Top-level files (``noscript.html``) are site chrome, not help pages.
    """
    return sorted(
        p.relative_to(hdir).as_posix() for p in (hdir / "text").rglob("*.html") if p.is_file()
    )


#: Letters of the script of each non-Latin-script help language. Untranslated help
#: paragraphs stay in English; in these languages they are recognised by having none.
_SCRIPT_RE: dict[str, re.Pattern[str]] = {
    "el": re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]"),
    "hi": re.compile(r"[\u0900-\u097f]"),
    "ja": re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]"),
    "ko": re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]"),
    "ru": re.compile(r"[\u0400-\u04ff]"),
    "zh": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]"),
}


def build_libreoffice_help(
    extracted_root: PathLike,
    lang: str,
    out_tsv: PathLike,
    stats_json: PathLike,
    *,
    heldout_fraction: float,
    seed_salt: str = "xlalign",
    english_root: PathLike | None = None,
    require_script: bool = True,
    progress: bool = True,
) -> dict[str, Any]:
    """Write the content blocks of every help page of ``lang`` as a unit TSV plus stats.

    Unit ids are ``relpath#block-id``; the document is the page's relative path, and
    every block is its own paragraph. Pages with :func:`is_heldout` get ``split = heldout``.
    Untranslated (English) blocks are dropped: with ``require_script``, blocks of el, hi,
    ja, ko, ru and zh that contain no letter of that language's script; with
    ``english_root`` (an extracted ``libreoffice-help-en-us``), blocks whose text equals
    the English block with the same id. Returns the stats.
    """
    if not 0.0 <= heldout_fraction < 1.0:
        raise ConfigError(f"heldout_fraction: {heldout_fraction!r}; expected a number in [0, 1)")
    hdir = help_dir(extracted_root, lang)
    docs = list_documents(hdir)
    if not docs:
        raise InputError(f"{hdir}/text: no .html help pages (language {lang!r})")
    en_dir = help_dir(english_root, "en") if english_root is not None and lang != "en" else None
    dropped: Counter[str] = Counter()
    keep = _Filter(script=_SCRIPT_RE.get(lang) if require_script else None, english_dir=en_dir)
    units = _units(hdir, docs, heldout_fraction, seed_salt, keep, dropped, progress)
    stats = {
        "source": f"Debian {debian_package(lang)} ({hdir.name})",
        "licence": "MPL-2.0",
        "language": lang,
        "pages": len(docs),
        "heldout_fraction": heldout_fraction,
        "seed_salt": seed_salt,
        "untranslated_filter": {
            "script": keep.script is not None,
            "same_as_english": en_dir is not None,
        },
    }
    result = write_units(units, out_tsv, stats_json, stats, dropped=dropped)
    log.info("libreoffice help %s: %s units, %s dropped", lang, result["units"], result["dropped"])
    return result


@dataclass
class _Filter:
    """Recognises untranslated blocks (see :func:`build_libreoffice_help`)."""

    script: re.Pattern[str] | None
    english_dir: Path | None

    def english(self, relpath: str) -> dict[str, str]:
        if self.english_dir is None:
            return {}
        path = self.english_dir / relpath
        if not path.is_file():
            return {}
        return {b: normalise_text(t) for b, t in extract_blocks(_read(path))}

    def untranslated(self, text: str, english_text: str | None) -> bool:
        if self.script is not None and not self.script.search(text):
            return True
        return english_text is not None and text == english_text


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: invalid UTF-8 at byte {exc.start}; expected UTF-8 HTML") from exc


def _units(
    hdir: Path,
    docs: list[str],
    fraction: float,
    salt: str,
    keep: _Filter,
    dropped: Counter[str],
    progress: bool,
) -> Iterable[Unit]:
    for relpath in tqdm(docs, desc=f"help {hdir.name}", unit=" page", disable=not progress):
        blocks = extract_blocks(_read(hdir / relpath))
        english = keep.english(relpath)
        split = "heldout" if is_heldout(relpath, fraction, salt) else "train"
        seen: set[str] = set()
        for block_id, raw in blocks:
            text = normalise_text(raw)
            if not text:
                dropped["empty"] += 1
                continue
            if block_id in seen:
                dropped["duplicate_id"] += 1
                continue
            seen.add(block_id)
            if keep.untranslated(text, english.get(block_id)):
                dropped["untranslated"] += 1
                continue
            uid = f"{relpath}#{block_id}"
            yield Unit(id=uid, split=split, doc=relpath, para=uid, text=text)
