"""The word-alignment stage's tables: a parallel corpus (``corpus.tsv``) and its word pairs
(``pairs.tsv``).

``corpus.tsv`` (``results/<name>/parallel/<pair>/``): a header ``id, source, target``, then
one pair per line: an id, the source tokens and the target tokens, tab-separated, the
tokens of a side joined by single spaces. ``pairs.tsv`` (the alignment directory): a
header ``pair_id, sentence, source_pos, target_pos, source, target``, then one link per
line: the pair id, the 0-based data row of the sentence in ``corpus.tsv``, the 0-based
positions of the two words, and the two words.

A token (a word) is a non-empty string without whitespace of any kind (what
:func:`xlalign.corpus.segment.clean_tokens` makes, and what eflomal's whitespace split
keeps whole); an id is a non-empty string without tab, newline or carriage return;
numbers are ASCII digits (at most 18). Readers refuse anything else with the file and
line (a wrong header, another number of columns, two spaces in a row, i.e. an empty
token); writers refuse (ValueError) what their reader would, so every file they write
reads back as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open, iter_lines

PARALLEL_COLUMNS = ("id", "source", "target")
PAIRS_COLUMNS = ("pair_id", "sentence", "source_pos", "target_pos", "source", "target")

#: Whitespace other than the single space that joins tokens.
_OTHER_SPACE = re.compile(r"[^\S ]")
_ID_BAD = re.compile(r"[\t\n\r]")
_NUMBER = re.compile(r"[0-9]{1,18}")
_WORD_BAD = re.compile(r"\s")


def side_problem(text: str) -> str | None:
    """Why ``text`` is not tokens joined by single spaces, or None."""
    if not text:
        return "no tokens"
    if text[0] == " " or text[-1] == " " or "  " in text:
        return "an empty token (a space at an end, or two in a row)"
    m = _OTHER_SPACE.search(text)
    if m is not None:
        return f"whitespace {m[0]!r} inside a token"
    return None


def id_problem(pid: str) -> str | None:
    """Why ``pid`` cannot be a pair id, or None."""
    if not pid:
        return "is empty"
    if _ID_BAD.search(pid):
        return "holds a tab, newline or carriage return"
    return None


def _header(lines: Iterator[str], p: Path, columns: Sequence[str], what: str) -> None:
    header = next(lines, None)
    expected = "\t".join(columns)
    if header is None:
        raise InputError(f"{p}: line 1: empty file; expected a {what} with header {expected!r}")
    if header != expected:
        raise InputError(f"{p}: line 1: header {header[:200]!r}; expected {expected!r}")


def _row(line: str, p: Path, lineno: int, columns: Sequence[str]) -> list[str]:
    row = line.split("\t")
    if len(row) != len(columns):
        raise InputError(
            f"{p}: line {lineno}: {len(row)} tab-separated columns; expected {len(columns)} "
            f"({', '.join(columns)})"
        )
    return row


def read_parallel(path: PathLike) -> Iterator[tuple[str, list[str], list[str]]]:
    """``(pair id, source tokens, target tokens)`` of a parallel corpus TSV.

    A bad header, column count, id or token is an :class:`InputError` naming the file and
    line.
    """
    p = Path(path)
    lines = iter_lines(p)
    _header(lines, p, PARALLEL_COLUMNS, "parallel TSV")
    for lineno, line in enumerate(lines, start=2):
        pid, src, tgt = _row(line, p, lineno, PARALLEL_COLUMNS)
        if id_problem(pid) is not None:
            raise InputError(f"{p}: line {lineno}: the id {pid!r} {id_problem(pid)}")
        for side, text in (("source", src), ("target", tgt)):
            why = side_problem(text)
            if why is not None:
                raise InputError(
                    f"{p}: line {lineno}: {side} side: {why}; expected tokens joined by "
                    "single spaces"
                )
        yield pid, src.split(" "), tgt.split(" ")


def format_parallel_row(pid: str, source: Sequence[str], target: Sequence[str]) -> str:
    """One data line of a parallel TSV (with its newline); ValueError for what would not
    read back."""
    src, tgt = " ".join(source), " ".join(target)
    for what, why in (
        ("id", id_problem(pid)),
        ("source side", side_problem(src)),
        ("target side", side_problem(tgt)),
    ):
        if why is not None:
            raise ValueError(f"pair {pid!r}: {what}: {why}")
    return f"{pid}\t{src}\t{tgt}\n"


def parallel_header() -> str:
    """The header line of a parallel TSV (with its newline)."""
    return "\t".join(PARALLEL_COLUMNS) + "\n"


def write_parallel(path: PathLike, rows: Iterable[tuple[str, Sequence[str], Sequence[str]]]) -> int:
    """Write a parallel TSV atomically from ``(id, source tokens, target tokens)``."""
    n = 0
    with atomic_open(path) as fh:
        fh.write(parallel_header())
        for pid, src, tgt in rows:
            fh.write(format_parallel_row(pid, src, tgt))
            n += 1
    return n


def count_pairs(path: PathLike) -> int:
    """The number of pairs in a parallel TSV (the file is validated as it is read)."""
    return sum(1 for _ in read_parallel(path))


# ---------------------------------------------------------------------------- pairs.tsv


def _word_problem(word: str) -> str | None:
    if not word:
        return "is empty"
    m = _WORD_BAD.search(word)
    return f"holds whitespace {m[0]!r}" if m is not None else None


AlignedPair = tuple[str, int, int, int, str, str]


def read_aligned_pairs(path: PathLike) -> Iterator[AlignedPair]:
    """``(pair id, sentence, source position, target position, source word, target word)``
    of a word-pairs TSV; anything malformed is an :class:`InputError` naming the line."""
    for _lineno, row in iter_aligned_pairs(path):
        yield row


def iter_aligned_pairs(path: PathLike) -> Iterator[tuple[int, AlignedPair]]:
    """``(line number, row)`` of :func:`read_aligned_pairs`, for callers that check more."""
    p = Path(path)
    lines = iter_lines(p)
    _header(lines, p, PAIRS_COLUMNS, "word-pairs table")
    for lineno, line in enumerate(lines, start=2):
        pid, sent, i, j, s, t = _row(line, p, lineno, PAIRS_COLUMNS)
        if id_problem(pid) is not None:
            raise InputError(f"{p}: line {lineno}: the pair id {pid!r} {id_problem(pid)}")
        if not all(_NUMBER.fullmatch(x) for x in (sent, i, j)):
            raise InputError(
                f"{p}: line {lineno}: sentence and positions must be non-negative integers, "
                f"got {sent[:20]!r}, {i[:20]!r}, {j[:20]!r}"
            )
        for side, word in (("source", s), ("target", t)):
            why = _word_problem(word)
            if why is not None:
                raise InputError(f"{p}: line {lineno}: the {side} word {word!r} {why}")
        yield lineno, (pid, int(sent), int(i), int(j), s, t)


def pairs_header() -> str:
    """The header line of a word-pairs TSV (with its newline)."""
    return "\t".join(PAIRS_COLUMNS) + "\n"


def format_pairs_row(pid: str, sentence: int, i: int, j: int, source: str, target: str) -> str:
    """One data line of a word-pairs TSV (with its newline); ValueError for what would not
    read back."""
    why = id_problem(pid) or _word_problem(source) or _word_problem(target)
    if why is None and not all(isinstance(x, int) and 0 <= x < 10**18 for x in (sentence, i, j)):
        why = "sentence and positions must be non-negative integers"
    if why is not None:
        raise ValueError(f"word pair {(pid, sentence, i, j, source, target)!r}: {why}")
    return f"{pid}\t{sentence}\t{i}\t{j}\t{source}\t{target}\n"
