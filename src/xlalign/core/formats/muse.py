"""MUSE bilingual dictionaries: one ``source target`` pair per line.

Decisions (MUSE's ``load_dictionary`` is the reference): fields are split on whitespace as
MUSE splits them (Python's ``str.split``, so Unicode spaces separate too, and a dictionary
word never holds one); a line with another number of fields is refused with its line;
blank lines are skipped; a repeated pair is kept once (the first), a source word with
several translations keeps all of them in file order. MUSE's files have no header: a
line that reads like one (``source target``, ``src tgt``, ``src trg``, in any case) would
be counted as a query, so it is refused with its line (on any line, so that the writer,
which sorts, refuses the same pairs). Invalid UTF-8 is refused
(MUSE opens dictionaries strictly too), unless read with ``surrogateescape`` as VecMap reads
them. A byte-order mark opening the file (an editor's
UTF-8 with BOM) is dropped: MUSE would keep it in the first source word, which then
misses the vocabulary and is silently scored as out of vocabulary. ``lowercase`` folds
both words as MUSE's lowercase evaluation does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from xlalign.core.errors import InputError
from xlalign.core.formats._lines import iter_byte_lines
from xlalign.core.io import PathLike, atomic_open, iter_lines

Pair = tuple[str, str]

#: How a dictionary's bytes that are not UTF-8 are read.
ENCODING_ERRORS = ("strict", "surrogateescape")

_HEADER_SOURCE = frozenset({"source", "src"})
_HEADER_TARGET = frozenset({"target", "tgt", "trg"})


def looks_like_header(fields: list[str]) -> bool:
    """Whether the fields of a line are column names rather than a word pair."""
    return (
        len(fields) == 2
        and fields[0].lower() in _HEADER_SOURCE
        and fields[1].lower() in _HEADER_TARGET
    )


def _surrogate_lines(path: PathLike) -> Iterator[str]:
    for _, raw in iter_byte_lines(path):
        yield raw.decode("utf-8", "surrogateescape").removesuffix("\r")


def read_pairs(
    path: PathLike, *, lowercase: bool = False, encoding_errors: str = "strict"
) -> list[Pair]:
    """A MUSE-format dictionary as (source, target) pairs, unique, in file order.

    An empty file is an empty list (a language may have no dictionary pairs); a line
    without exactly two fields, or a header line, raises :class:`InputError` naming the
    file and line. ``encoding_errors="surrogateescape"`` reads bytes that are not UTF-8
    as VecMap reads its dictionaries (so that a dictionary induced from a space read that
    way, whose words were written back as their bytes, reads back); the default
    ``"strict"`` refuses them with the line.
    """
    if encoding_errors not in ENCODING_ERRORS:
        raise ValueError(f"encoding_errors={encoding_errors!r}: expected one of {ENCODING_ERRORS}")
    lines = iter_lines(path) if encoding_errors == "strict" else _surrogate_lines(path)
    seen: set[Pair] = set()
    out: list[Pair] = []
    for lineno, line in enumerate(lines, start=1):
        if lineno == 1:
            line = line.removeprefix("\ufeff")
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
