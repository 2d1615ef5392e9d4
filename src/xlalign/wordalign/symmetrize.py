"""Word alignments as Pharaoh links, symmetrisation of two directions, and link filters.

A word alignment of one sentence pair is a set of *links* ``(i, j)``: ``i`` is the 0-based
index of a source token, ``j`` the 0-based index of a target token. The *Pharaoh* format
writes one sentence per line as space-separated ``i-j`` tokens (``0-0 1-2 2-1``); an empty
line is a sentence without links. :func:`format_pharaoh` writes links sorted by
``(i, j)``.

Directional aligners (IBM models, fast_align, eflomal) give each target word at most one
source word (forward) or each source word at most one target word (reverse). Both are
passed here in *source-target* order, so they are just two link sets ``A1`` (forward) and
``A2`` (reverse), and :func:`symmetrize` combines them with one of the standard heuristics
(Och & Ney 2003; Koehn et al. 2003, 2005; the names of Moses' ``train-model.perl``).
A word ``e`` (or ``f``) is *aligned* when some link of the current alignment ``A`` has it.

* ``intersection``: ``A1 ∩ A2`` (high precision);
* ``union``: ``A1 ∪ A2`` (high recall);
* ``grow`` / ``grow-diag``: grow the intersection towards the union::

      A = A1 ∩ A2
      repeat until a pass adds no point:
        for e = 0 .. n_src-1 (ascending):
          for f = 0 .. n_tgt-1 (ascending):
            if (e, f) in A:
              for (de, df) in NEIGHBOURS:          # in this order
                (e', f') = (e + de, f + df)
                if (e', f') in A1 ∪ A2 and (e' unaligned or f' unaligned):
                  add (e', f') to A               # the state is updated at once

  ``NEIGHBOURS`` is ``(-1,0), (0,-1), (1,0), (0,1)`` for ``grow`` and these followed by
  the diagonals ``(-1,-1), (-1,1), (1,-1), (1,1)`` for ``grow-diag``;
* ``final(B)``: ``for e ascending: for f ascending: if (e, f) in B and (e unaligned or f
  unaligned): add (e, f)``; ``grow-diag-final`` is grow-diag, then ``final(A1)``, then
  ``final(A2)``;
* ``final-and(B)``: the same with ``e unaligned and f unaligned``; ``grow-diag-final-and``
  is grow-diag, then ``final-and(A1)``, then ``final-and(A2)``.

This is the variant of Koehn's published pseudo-code: points are visited in (source,
target) order, a point added during a pass is itself visited later in the same pass when
it comes after the current one in that order, and "aligned" always refers to the current
alignment (immediate update). Implementations that visit points in another order (a queue
of new points, neighbours in another order) can differ from it on a few sentences, since
adding one point can block a later one. ``intersection ⊆ grow-diag ⊆ grow-diag-final ⊆
union`` always holds; ``grow ⊆ grow-diag`` and ``grow-diag-final-and ⊆ grow-diag-final``
need not.

Filters for training data from alignments (Wu & Dredze 2020 keep only one-to-one links):
:func:`one_to_one` keeps a link only when both its words have no other link;
:func:`drop_identical` removes links between identical strings (copied names, numbers,
punctuation), which teach a model nothing about translation.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from xlalign.core.errors import ConfigError, InputError

# The Pharaoh format has one reader and writer, in xlalign.core.formats.pharaoh; its names
# are re-exported here for this stage's callers.
from xlalign.core.formats.pharaoh import (  # noqa: F401
    Link,
    format_pharaoh,
    parse_pharaoh,
    read_pharaoh,
    write_pharaoh,
)

HEURISTICS = (
    "intersection",
    "union",
    "grow",
    "grow-diag",
    "grow-diag-final",
    "grow-diag-final-and",
)

_NEIGHBOURS: tuple[Link, ...] = ((-1, 0), (0, -1), (1, 0), (0, 1))
_DIAGONALS: tuple[Link, ...] = ((-1, -1), (-1, 1), (1, -1), (1, 1))


def _check_links(links: Iterable[Link], n_src: int | None, n_tgt: int | None) -> None:
    for i, j in links:
        if i < 0 or j < 0:
            raise InputError(f"link ({i}, {j}): token indices must be non-negative")
        if (n_src is not None and i >= n_src) or (n_tgt is not None and j >= n_tgt):
            raise InputError(
                f"link ({i}, {j}) lies outside a sentence pair of {n_src} source and "
                f"{n_tgt} target token(s)"
            )


def _grow(links: set[Link], union: set[Link], neighbours: Sequence[Link]) -> None:
    """Grow ``links`` in place towards ``union`` (the loop in the module docstring).

    Equivalent to scanning the full ``n_src x n_tgt`` grid, but only rows of the union are
    visited, and within a row only the aligned cells: the next cell visited is the
    smallest aligned target index beyond the current one, so a point added to the current
    row to the right is visited in the same pass, as in the grid scan.
    """
    src = {i for i, _ in links}
    tgt = {j for _, j in links}
    rows: dict[int, set[int]] = defaultdict(set)
    for i, j in links:
        rows[i].add(j)
    union_rows = sorted({i for i, _ in union})
    added = True
    while added:
        added = False
        for e in union_rows:
            f = -1
            while True:
                later = [g for g in rows[e] if g > f]
                if not later:
                    break
                f = min(later)
                for de, df in neighbours:
                    p = (e + de, f + df)
                    if p in union and p not in links and (p[0] not in src or p[1] not in tgt):
                        links.add(p)
                        src.add(p[0])
                        tgt.add(p[1])
                        rows[p[0]].add(p[1])
                        added = True


def _final(links: set[Link], candidates: set[Link], *, both: bool) -> None:
    """``final`` (``both=False``) or ``final-and`` (``both=True``) of ``candidates``."""
    src = {i for i, _ in links}
    tgt = {j for _, j in links}
    for e, f in sorted(candidates):
        if (e, f) in links:
            continue
        e_free, f_free = e not in src, f not in tgt
        if (e_free and f_free) if both else (e_free or f_free):
            links.add((e, f))
            src.add(e)
            tgt.add(f)


def symmetrize(
    forward: Iterable[Link],
    reverse: Iterable[Link],
    heuristic: str,
    n_src: int | None = None,
    n_tgt: int | None = None,
) -> set[Link]:
    """Combine two directional alignments (both in source-target order) by ``heuristic``.

    ``heuristic`` is one of :data:`HEURISTICS`, defined in the module docstring (Koehn's
    pseudo-code: points in ascending (source, target) order, immediate update). The
    sentence lengths ``n_src``/``n_tgt`` are optional: only the union's points can be
    added, so the loops need no other bound; when given, a link outside them raises
    :class:`InputError`. An unknown heuristic raises :class:`ConfigError`.
    """
    if heuristic not in HEURISTICS:
        raise ConfigError(
            f"symmetrization heuristic {heuristic!r}: expected one of {', '.join(HEURISTICS)}"
        )
    a1, a2 = set(forward), set(reverse)
    _check_links(a1 | a2, n_src, n_tgt)
    if heuristic == "intersection":
        return a1 & a2
    union = a1 | a2
    if heuristic == "union":
        return union
    links = a1 & a2
    _grow(links, union, _NEIGHBOURS if heuristic == "grow" else _NEIGHBOURS + _DIAGONALS)
    if heuristic in ("grow-diag-final", "grow-diag-final-and"):
        both = heuristic == "grow-diag-final-and"
        _final(links, a1, both=both)
        _final(links, a2, both=both)
    return links


def _one_to_one(links: Iterable[Link]) -> set[Link]:
    links = set(links)
    per_src = Counter(i for i, _ in links)
    per_tgt = Counter(j for _, j in links)
    return {(i, j) for i, j in links if per_src[i] == 1 and per_tgt[j] == 1}


def _drop_identical(
    links: Iterable[Link],
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    *,
    casefold: bool,
    where: str,
) -> set[Link]:
    links = set(links)
    _check_tokens(links, src_tokens, tgt_tokens, where)
    if casefold:
        return {(i, j) for i, j in links if src_tokens[i].casefold() != tgt_tokens[j].casefold()}
    return {(i, j) for i, j in links if src_tokens[i] != tgt_tokens[j]}


def _check_tokens(
    links: Iterable[Link], src_tokens: Sequence[str], tgt_tokens: Sequence[str], where: str
) -> None:
    for i, j in links:
        if not (0 <= i < len(src_tokens) and 0 <= j < len(tgt_tokens)):
            raise InputError(
                f"{where + ': ' if where else ''}link {i}-{j} out of range for a sentence pair of "
                f"{len(src_tokens)} source and {len(tgt_tokens)} target token(s)"
            )


def one_to_one(links: Iterable[Link]) -> set[Link]:
    """The links ``(i, j)`` where ``i`` has no other target and ``j`` no other source."""
    return _one_to_one(links)


def drop_identical(
    links: Iterable[Link],
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    *,
    casefold: bool = False,
    where: str = "",
) -> set[Link]:
    """The links whose source and target tokens differ (compared casefolded if asked).

    A link beyond the token lists raises :class:`InputError` naming ``where``.
    """
    return _drop_identical(links, src_tokens, tgt_tokens, casefold=casefold, where=where)


def filter_links(
    links: Iterable[Link],
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    *,
    one_to_one: bool,
    drop_identical: bool,
    casefold: bool = False,
    where: str = "",
) -> tuple[set[Link], dict[str, int]]:
    """Apply :func:`one_to_one` and then :func:`drop_identical`, as asked.

    Returns the kept links and how many each filter removed: ``{"not_one_to_one": n,
    "identical": n}`` (0 for a filter that is off). Links are checked against the token
    lists either way.
    """
    kept = set(links)
    _check_tokens(kept, src_tokens, tgt_tokens, where)
    counts = {"not_one_to_one": 0, "identical": 0}
    if one_to_one:
        before = len(kept)
        kept = _one_to_one(kept)
        counts["not_one_to_one"] = before - len(kept)
    if drop_identical:
        before = len(kept)
        kept = _drop_identical(kept, src_tokens, tgt_tokens, casefold=casefold, where=where)
        counts["identical"] = before - len(kept)
    return kept, counts
