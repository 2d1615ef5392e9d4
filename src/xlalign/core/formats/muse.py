"""MUSE bilingual dictionaries: one ``source target`` pair per line.

Decisions (MUSE's ``load_dictionary`` is the reference): fields are split on whitespace as
MUSE splits them (Python's ``str.split``, so Unicode spaces separate too, and a dictionary
word never holds one); a line with another number of fields is refused with its line;
blank lines are skipped; a repeated pair is kept once (the first), a source word with
several translations keeps all of them in file order. MUSE's files have no header: a
line that reads like one (``source target``, ``src tgt``, ``src trg``, in any case) would
be counted as a query, so it is refused with its line (on any line, so that the writer,
which sorts, refuses the same pairs). Invalid UTF-8 is refused
(MUSE opens dictionaries strictly too). ``lowercase`` folds both words as MUSE's
lowercase evaluation does.
"""

from __future__ import annotations

from collections.abc import Iterable

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open, iter_lines

Pair = tuple[str, str]

_HEADER_SOURCE = frozenset({"source", "src"})
_HEADER_TARGET = frozenset({"target", "tgt", "trg"})


def looks_like_header(fields: list[str]) -> bool:
    """Whether the fields of a line are column names rather than a word pair."""
    return (
        len(fields) == 2
        and fields[0].lower() in _HEADER_SOURCE
        and fields[1].lower() in _HEADER_TARGET
    )


def read_pairs(path: PathLike, *, lowercase: bool = False) -> list[Pair]:
    """A MUSE-format dictionary as (source, target) pairs, unique, in file order.

    An empty file is an empty list (a language may have no dictionary pairs); a line
    without exactly two fields, or a header line, raises :class:`InputError` naming the
    file and line.
    """
    seen: set[Pair] = set()
    out: list[Pair] = []
    for lineno, line in enumerate(iter_lines(path), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InputError(
                f"{path}: line {lineno}: expected 'source target' (2 fields), got {len(fields)}"
            )
        if looks_like_header(fields):
            raise InputError(
                f"{path}: line {lineno}: {line.strip()!r} looks like a header; MUSE "
                "dictionaries have none (every line is a 'source target' pair): remove it"
            )
        pair = (fields[0].lower(), fields[1].lower()) if lowercase else (fields[0], fields[1])
        if pair not in seen:
            seen.add(pair)
            out.append(pair)
    return out


def pair_problem(pair: Pair) -> str | None:
    """Why a pair cannot be written so that it reads back, or None."""
    for w in pair:
        if not w:
            return "holds an empty word"
        if any(ch.isspace() for ch in w):
            return f"word {w!r} holds whitespace"
    if looks_like_header(list(pair)):
        return "would read as a header line"
    return None


def format_pair(source: str, target: str) -> str:
    """One dictionary line (with its newline); ValueError for a pair that would not read
    back (a word with whitespace, an empty word, a header-like pair)."""
    why = pair_problem((source, target))
    if why is not None:
        raise ValueError(f"pair {(source, target)!r} {why}")
    return f"{source} {target}\n"


def write_pairs(pairs: Iterable[Pair], path: PathLike, *, sort: bool = True) -> int:
    """Write MUSE format (``source target`` per line) atomically: sorted and unique, or
    with ``sort=False`` in the given order.

    Unlike the gold-dictionary builders, an empty result is allowed here (a language with
    too few pairs in its vocabulary): the file is then empty and the caller's stats say so.
    A pair that would not read back (a word with whitespace, an empty word) is a
    ValueError, raised before anything is written.
    """
    lines = [format_pair(s, t) for s, t in (sorted(set(pairs)) if sort else pairs)]
    with atomic_open(path) as fh:
        fh.writelines(lines)
    return len(lines)
