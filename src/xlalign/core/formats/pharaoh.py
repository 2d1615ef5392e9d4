"""Pharaoh word-alignment links: one sentence per line, space-separated ``i-j`` tokens.

``i`` and ``j`` are 0-based token indices (source, target) written in ASCII digits, as
eflomal and fast_align write them; an empty line is a sentence without links. Gold files
may also mark a possible link ``i?j`` or ``ipj`` (the latter as awesome-align's gold sets
write it; :func:`parse_gold_pharaoh`, read by :mod:`xlalign.wordalign.aer`), and may be
declared 1-indexed; predictions may not. A token that is
not ``i-j`` (a negative or non-integer index, another separator), or an index of more
than 18 digits, is refused with its line. The writer writes each sentence's links
sorted by ``(i, j)`` and once each, so any line read back gives the same link set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open, iter_lines

Link = tuple[int, int]

_LINK = re.compile(r"([0-9]{1,18})-([0-9]{1,18})")
_GOLD_LINK = re.compile(r"([0-9]{1,18})([-?p])([0-9]{1,18})")


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def parse_pharaoh(
    line: str, *, where: str = "", n_src: int | None = None, n_tgt: int | None = None
) -> set[Link]:
    """The links of one Pharaoh line (``"0-0 1-2 2-1"``); an empty line has none.

    A token that is not ``i-j`` with non-negative integers, or (when the sentence lengths
    ``n_src``/``n_tgt`` are given) an index out of range, raises :class:`InputError`
    naming ``where`` (e.g. ``"file.txt line 3"``) and the token.
    """
    links: set[Link] = set()
    for tok in line.split():
        m = _LINK.fullmatch(tok)
        if m is None:
            raise InputError(
                f"{_prefix(where)}bad link {tok[:40]!r}: expected 'i-j' with non-negative "
                f"integer token indices (Pharaoh format)"
            )
        i, j = int(m[1]), int(m[2])
        if n_src is not None and i >= n_src:
            raise InputError(
                f"{_prefix(where)}link {tok!r}: source index {i} out of range for a "
                f"sentence of {n_src} source token(s)"
            )
        if n_tgt is not None and j >= n_tgt:
            raise InputError(
                f"{_prefix(where)}link {tok!r}: target index {j} out of range for a "
                f"sentence of {n_tgt} target token(s)"
            )
        links.add((i, j))
    return links


def parse_gold_pharaoh(
    line: str,
    *,
    where: str = "",
    base: int = 0,
    n_src: int | None = None,
    n_tgt: int | None = None,
) -> tuple[set[Link], set[Link]]:
    """The 0-based (sure, possible) links of one gold line: ``i-j`` sure, ``i?j`` or
    ``ipj`` possible, written ``base``-indexed (0 or 1).

    With the sentence lengths ``n_src``/``n_tgt``, a link outside the sentence pair (as
    a 1-indexed file read as 0-indexed gives on nearly every line) raises
    :class:`InputError` naming ``where`` and the link; without them, a position below
    ``base`` does.
    """
    if base not in (0, 1):
        raise InputError(f"{_prefix(where)}index base {base!r}: expected 0 or 1")
    sure: set[Link] = set()
    possible: set[Link] = set()
    for tok in line.split():
        m = _GOLD_LINK.fullmatch(tok)
        if m is None:
            raise InputError(
                f"{_prefix(where)}bad gold link {tok[:40]!r}: expected 'i-j' (sure) or 'i?j' / "
                f"'ipj' (possible) with {base}-based integer indices"
            )
        i, j = int(m[1]) - base, int(m[3]) - base
        for pos, n, side in ((i, n_src, "source"), (j, n_tgt, "target")):
            if pos < 0 or (n is not None and pos >= n):
                size = "" if n is None else f" of a sentence of {n} {side} word(s)"
                raise InputError(
                    f"{_prefix(where)}gold link {tok!r}: {side} position {pos + base} "
                    f"({base}-indexed) is outside the sentence{size}; a file read with the "
                    "wrong index base gives this on most lines"
                )
        (sure if m[2] == "-" else possible).add((i, j))
    return sure, possible


def format_pharaoh(links: Iterable[Link]) -> str:
    """One Pharaoh line: the links sorted by ``(i, j)``, as space-separated ``i-j``."""
    out = sorted(set(links))
    for i, j in out:
        if not (isinstance(i, int) and isinstance(j, int) and i >= 0 and j >= 0):
            raise ValueError(f"link {(i, j)!r}: expected two non-negative integers")
    return " ".join(f"{i}-{j}" for i, j in out)


def read_pharaoh(path: PathLike) -> Iterator[set[Link]]:
    """The link sets of a Pharaoh file, one per line (``.gz``/``.xz``/``.bz2`` allowed)."""
    for lineno, line in enumerate(iter_lines(path), start=1):
        yield parse_pharaoh(line, where=f"{path}: line {lineno}")


def write_pharaoh(alignments: Iterable[Iterable[Link]], path: PathLike) -> int:
    """Write one Pharaoh line per sentence atomically; returns the number of lines."""
    n = 0
    with atomic_open(path) as fh:
        for links in alignments:
            fh.write(format_pharaoh(links) + "\n")
            n += 1
    return n
