"""The public word-alignment gold sets in the formats they ship in.

Two published layouts, each read with the index base its set declares (never guessed):

* ``"awesome"``: the test sets of neulab/awesome-align's ``examples/`` (WPT 2003 en-fr,
  WPT 2005 ro-en, KFTT ja-en, Tsinghua zh-en). A text file of ``source ||| target`` lines
  and a gold file with one line per sentence pair of space-separated links, ``i-j`` sure
  and ``ipj`` possible (``i`` a source word, ``j`` a target word), 1-indexed as shipped.
* ``"wpt"``: the WPT 2005 layout of eflomal's en-hi copy (``3rdparty/data/test.{eng,hin,
  eng.hin.wa}``): one ``<s snum=N>text</s>`` line per sentence in each text file, and a
  links file of ``snum i j [S|P] [confidence]`` lines (1-indexed; a missing ``S``/``P``
  is ``S``; position 0 is NULL, as in the NAACL format, and such a link is skipped).

Words are split on the ASCII space only, as these sets are tokenised: a FULL-WIDTH SPACE
(U+3000) in KFTT ja-en is a word of its own, and splitting on any Unicode whitespace would
shift every later word of its line. Every link is checked against its sentence's word
counts as it is read: a link outside its sentence (as a set read with the wrong index base
gives on nearly every line) is an :class:`InputError` naming the file, line and link.
A published file's own erratum (eflomal's en-hi has one link past the end of its Hindi
sentence) is dropped only where the caller names its line in ``drop_lines``, and a named
line that is not out of range is an error too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike

Link = tuple[int, int]
Gold = dict[int, tuple[set[Link], set[Link]]]

FORMATS = ("awesome", "wpt")
_AWESOME_LINK = re.compile(r"([0-9]{1,18})([-p])([0-9]{1,18})")
_WPT_SENTENCE = re.compile(r"<s snum=([0-9]{1,18})>(.*)</s>[ \t\r]*")
_INT = re.compile(r"[0-9]{1,18}")


@dataclass
class GoldSet:
    """Sentence pairs (words) and their gold links: 0-based sentence index ->
    ``(sure, possible)`` with 0-based word indices and ``sure ⊆ possible``."""

    src: list[list[str]]
    tgt: list[list[str]]
    gold: Gold
    description: str
    #: links left out as errata of the published file: (file, line, link as written)
    dropped: list[tuple[str, int, str]] = field(default_factory=list)


def split_words(text: str) -> list[str]:
    """The words of one tokenised sentence: split on ASCII spaces only (runs of spaces and
    leading/trailing ones give no empty word; every other character, U+3000 included, is
    part of a word)."""
    return [w for w in text.split(" ") if w]


def _lines(path: PathLike) -> list[str]:
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: file not found") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{p} line {line}: not valid UTF-8 ({exc.reason})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    # lines end at \n (a \r before it is dropped), never at other Unicode line breaks
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def check_link(
    i: int,
    j: int,
    n_src: int,
    n_tgt: int,
    *,
    base: int,
    where: str,
    token: str,
) -> Link:
    """The 0-based link of word positions ``i``, ``j`` written ``base``-indexed, checked to
    lie inside a sentence pair of ``n_src`` x ``n_tgt`` words; otherwise an InputError
    naming ``where`` (file and line), the link as written and the sentence lengths."""
    a, b = i - base, j - base
    if not (0 <= a < n_src and 0 <= b < n_tgt):
        side = "source" if not 0 <= a < n_src else "target"
        pos, n = (i, n_src) if side == "source" else (j, n_tgt)
        raise InputError(
            f"{where}: link {token!r} is outside its sentence pair: {side} position {pos} "
            f"({base}-indexed) of a sentence of {n} word(s) ({n_src} source, {n_tgt} "
            "target). A wrong index base gives this on most lines: check the set's "
            "declared base"
        )
    return a, b


def _check_drop_lines(path: PathLike, drop: Iterable[int], used: set[int]) -> None:
    unused = sorted(set(drop) - used)
    if unused:
        raise InputError(
            f"{path} line {unused[0]}: declared as an out-of-range erratum to drop, but "
            "that line holds no link outside its sentence"
        )


def _check_pairs(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], where: str) -> None:
    for k, (s, t) in enumerate(zip(src, tgt, strict=True)):
        if not s or not t:
            side = "source" if not s else "target"
            raise InputError(f"{where} sentence {k + 1}: the {side} side has no word")


def read_awesome(
    text_path: PathLike,
    gold_path: PathLike,
    *,
    base: int = 1,
    drop_lines: Sequence[int] = (),
) -> GoldSet:
    """An awesome-align gold set: ``source ||| target`` lines and one line of ``i-j``
    (sure) / ``ipj`` (possible) links per pair, ``base``-indexed (the shipped sets: 1)."""
    if base not in (0, 1):
        raise InputError(f"{gold_path}: index base {base!r}: expected 0 or 1")
    texts = _lines(text_path)
    golds = _lines(gold_path)
    if len(texts) != len(golds):
        raise InputError(
            f"{text_path} has {len(texts)} line(s) and {gold_path} {len(golds)}: expected "
            "one gold line per sentence pair"
        )
    src: list[list[str]] = []
    tgt: list[list[str]] = []
    for n, line in enumerate(texts, start=1):
        parts = line.split("|||")
        if len(parts) != 2:
            raise InputError(
                f"{text_path} line {n}: expected 'source words ||| target words' (one "
                f"'|||'), got {len(parts) - 1} separator(s)"
            )
        src.append(split_words(parts[0]))
        tgt.append(split_words(parts[1]))
    _check_pairs(src, tgt, str(text_path))
    gold: Gold = {}
    dropped: list[tuple[str, int, str]] = []
    used: set[int] = set()
    for n, line in enumerate(golds, start=1):
        sure: set[Link] = set()
        possible: set[Link] = set()
        where = f"{gold_path} line {n}"
        for tok in split_words(line):
            m = _AWESOME_LINK.fullmatch(tok)
            if m is None:
                raise InputError(
                    f"{where}: bad link {tok[:40]!r}: expected 'i-j' (sure) or 'ipj' "
                    f"(possible) with {base}-indexed word positions"
                )
            try:
                link = check_link(
                    int(m[1]),
                    int(m[3]),
                    len(src[n - 1]),
                    len(tgt[n - 1]),
                    base=base,
                    where=where,
                    token=tok,
                )
            except InputError:
                if n not in drop_lines:
                    raise
                used.add(n)
                dropped.append((str(gold_path), n, tok))
                continue
            (sure if m[2] == "-" else possible).add(link)
        gold[n - 1] = (sure, possible | sure)
    _check_drop_lines(gold_path, drop_lines, used)
    return GoldSet(src, tgt, gold, f"{gold_path} (awesome-align format)", dropped)


def _read_wpt_text(path: PathLike) -> tuple[list[int], list[list[str]]]:
    ids: list[int] = []
    words: list[list[str]] = []
    for n, line in enumerate(_lines(path), start=1):
        if not line.strip(" \t"):
            continue
        m = _WPT_SENTENCE.fullmatch(line)
        if m is None:
            raise InputError(
                f"{path} line {n}: expected '<s snum=N>words</s>' (WPT format), got {line[:60]!r}"
            )
        sid = int(m[1])
        if sid in ids:
            raise InputError(f"{path} line {n}: sentence number {sid} occurs twice")
        ids.append(sid)
        words.append(split_words(m[2].replace("\t", " ")))
    return ids, words


def read_wpt(
    src_path: PathLike,
    tgt_path: PathLike,
    links_path: PathLike,
    *,
    base: int = 1,
    drop_lines: Sequence[int] = (),
) -> GoldSet:
    """A WPT gold set: two ``<s snum=N>`` text files (the same sentence numbers in the
    same order) and ``snum i j [S|P] [confidence]`` links, ``base``-indexed (WPT: 1, with 0
    for NULL, skipped). Sentences without links have no gold links."""
    if base not in (0, 1):
        raise InputError(f"{links_path}: index base {base!r}: expected 0 or 1")
    src_ids, src = _read_wpt_text(src_path)
    tgt_ids, tgt = _read_wpt_text(tgt_path)
    if src_ids != tgt_ids:
        first = next(
            (k for k, (a, b) in enumerate(zip(src_ids, tgt_ids, strict=False)) if a != b),
            min(len(src_ids), len(tgt_ids)),
        )
        raise InputError(
            f"{src_path} and {tgt_path}: the sentence numbers differ (sentence {first + 1}: "
            f"{len(src_ids)} and {len(tgt_ids)} sentences)"
        )
    if not src_ids:
        raise InputError(f"{src_path}: no '<s snum=N>' sentence")
    _check_pairs(src, tgt, str(src_path))
    index = {sid: k for k, sid in enumerate(src_ids)}
    gold: Gold = {k: (set(), set()) for k in range(len(src))}
    dropped: list[tuple[str, int, str]] = []
    used: set[int] = set()
    for n, line in enumerate(_lines(links_path), start=1):
        fields = line.replace("\t", " ").split(" ")
        fields = [f for f in fields if f]
        if not fields:
            continue
        where = f"{links_path} line {n}"
        if not (
            3 <= len(fields) <= 5
            and all(_INT.fullmatch(f) for f in fields[:3])
            and (len(fields) < 4 or fields[3] in ("S", "P"))
        ):
            raise InputError(
                f"{where}: expected 'snum i j [S|P] [confidence]' with integer positions, "
                f"got {line.strip()[:60]!r}"
            )
        if len(fields) == 5:
            try:
                float(fields[4])
            except ValueError:
                raise InputError(f"{where}: confidence {fields[4]!r} is not a number") from None
        sid, i, j = (int(f) for f in fields[:3])
        if sid not in index:
            raise InputError(f"{where}: sentence number {sid} is not in {src_path}")
        k = index[sid]
        if base == 1 and (i == 0 or j == 0):  # NULL
            continue
        token = " ".join(fields[:3])
        try:
            link = check_link(i, j, len(src[k]), len(tgt[k]), base=base, where=where, token=token)
        except InputError:
            if n not in drop_lines:
                raise
            used.add(n)
            dropped.append((str(links_path), n, token))
            continue
        sure, possible = gold[k]
        possible.add(link)
        if len(fields) < 4 or fields[3] == "S":
            sure.add(link)
    _check_drop_lines(links_path, drop_lines, used)
    return GoldSet(src, tgt, gold, f"{links_path} (WPT format)", dropped)
