"""eflomal priors learnt from an alignment: what ``eflomal-makepriors`` computes, restated.

eflomal's Bayesian models take Dirichlet pseudo-counts ("priors") for their lexical,
jump (HMM) and fertility distributions. Counted on the links of an aligned sample, they
carry that sample's statistics into the alignment of other text: the chunks of a large
corpus, each aligned on its own (:mod:`xlalign.wordalign.eflomal`), then start from the
same statistics instead of from scratch each (Mozilla's translations pipeline found that
independent chunks bias the links, and passes priors learnt on a sample to every chunk).

From one sentence pair (source words ``s``, target words ``t``) with its forward and
reverse links (both written ``i-j``, source position i, target position j, 0-based):

* **LEX** ``(s[i], t[j])``: +1 per forward link ``i-j``.
* **HMMF** jump: the forward links in order of target position (links of one target
  position in the order given); the first link of each new target position adds the jump
  ``i - previous`` where ``previous`` is the source position of the last link before it
  (``-1`` at the start of the sentence); after the last link, the jump to the end,
  ``len(s) - previous``, is added too (a sentence without links adds ``len(s) + 1``).
* **HMMR** jump: the same over the reverse links, in order of source position, with target
  positions: jumps ``j - previous``, then ``len(t) - previous``.
* **FERF** ``(s[i], n)``: +1 for each source position i with ``n >= 1`` forward links.
* **FERR** ``(t[j], n)``: +1 for each target position j with ``n >= 1`` reverse links.

Words are counted as written (eflomal lowercases them, and applies the prefix / suffix
lengths, when it reads the priors, summing the records that then coincide).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence

from xlalign.core.formats.pharaoh import parse_pharaoh
from xlalign.core.formats.priors import PriorCounts

Link = tuple[int, int]


def links_in_order(
    line: str, *, where: str = "", n_src: int | None = None, n_tgt: int | None = None
) -> list[Link]:
    """The links of a Pharaoh line in the order written (checked as
    :func:`xlalign.core.formats.pharaoh.parse_pharaoh` checks them)."""
    parse_pharaoh(line, where=where, n_src=n_src, n_tgt=n_tgt)
    out: list[Link] = []
    for tok in line.split():
        i, _, j = tok.partition("-")
        out.append((int(i), int(j)))
    return out


def _jumps(links: Sequence[Link], by: int, length: int, into: Counter[int]) -> None:
    """Add the jumps of ``links`` grouped by position ``by`` (1: target, 0: source) to
    ``into``: the other position's jump to each group's first link from the previous
    group's last one, then to ``length`` (the end)."""
    other = 1 - by
    previous = -1
    for _, group in itertools.groupby(sorted(links, key=lambda link: link[by]), lambda x: x[by]):
        members = list(group)
        into[members[0][other] - previous] += 1
        previous = members[-1][other]
    into[length - previous] += 1


def add_pair(
    priors: PriorCounts,
    src: Sequence[str],
    tgt: Sequence[str],
    forward: Sequence[Link],
    reverse: Sequence[Link],
) -> None:
    """Count one sentence pair's links into ``priors`` (module docstring)."""
    for i, j in forward:
        priors.lex[(src[i], tgt[j])] += 1
    _jumps(forward, 1, len(src), priors.hmmf)
    _jumps(reverse, 0, len(tgt), priors.hmmr)
    for i, n in Counter(i for i, _ in forward).items():
        priors.ferf[(src[i], n)] += 1
    for j, n in Counter(j for _, j in reverse).items():
        priors.ferr[(tgt[j], n)] += 1


def count_priors(
    pairs: Iterable[tuple[Sequence[str], Sequence[str], str, str]], *, where: str = ""
) -> PriorCounts:
    """Priors from ``(source words, target words, forward line, reverse line)`` per pair,
    the link lines in Pharaoh format; a link outside its sentence is an InputError naming
    ``where`` and the pair (counted from 1)."""
    priors = PriorCounts()
    for k, (src, tgt, fline, rline) in enumerate(pairs, start=1):
        at = f"{where}pair {k}"
        fwd = links_in_order(fline, where=f"{at}, forward", n_src=len(src), n_tgt=len(tgt))
        rev = links_in_order(rline, where=f"{at}, reverse", n_src=len(src), n_tgt=len(tgt))
        add_pair(priors, src, tgt, fwd, rev)
    return priors
