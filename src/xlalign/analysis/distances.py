"""L2 distances between the contextual vectors of related and unrelated word pairs
(003 section 5.4, Figure 1).

003 "calculate[s] L2 distances between contextualized embeddings in English and other
languages ... taken from the last layer output", with "semantically related words from
parallel sentences (matched via fast_align) and unrelated words from unpaired sentences",
and compares the two histograms. Here:

* related pair: source word ``i`` and target word ``j`` of the *same* sentence pair,
  linked by the word aligner (:func:`sample_word_pairs` draws them from the links);
* unrelated pair: the source word of one link and the target word of a link of a
  *different* sentence pair, so both populations are drawn from the same (aligned) words
  and differ only in being translations or not;
* :func:`summarise`: means, standard deviations, medians, histograms on fixed bins (the
  same for every model, so they can be overlaid), and the probability that a random
  related pair is closer than a random unrelated one (the ROC AUC of "distance" as a
  detector of unrelated pairs, i.e. the Mann-Whitney U statistic / (n_related x
  n_unrelated), ties counting one half). 003 reports no such number; it is the area
  under the curve of its histograms' separation, named as what it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError

#: (source sentence, source word, target sentence, target word)
WordPair = tuple[int, int, int, int]

#: Default histogram bins: width 1 from 0 to 50 (L2 distances of encoders with
#: LayerNorm outputs, hidden sizes 32-1024, fall mostly inside; larger ones are counted
#: as ``above``). Pass the same ``bins`` for every model that is compared.
DEFAULT_BINS: tuple[float, ...] = tuple(float(x) for x in range(51))


@dataclass(frozen=True)
class WordPairs:
    """Sampled related and unrelated word pairs (see the module docstring)."""

    related: list[WordPair] = field(default_factory=list)
    unrelated: list[WordPair] = field(default_factory=list)


def sample_word_pairs(
    links_per_sentence: Sequence[Iterable[tuple[int, int]]],
    n_related: int,
    n_unrelated: int,
    seed: int = 0,
) -> WordPairs:
    """Draw up to ``n_related`` distinct related and ``n_unrelated`` distinct unrelated
    pairs from the links of parallel sentences (``links_per_sentence[k]``: the ``(i, j)``
    links of pair ``k``), with a numpy Generator seeded by ``seed``.

    Fewer related pairs come back when there are fewer links; unrelated pairs need links
    in at least two sentences (none otherwise), and are drawn until ``n_unrelated``
    distinct ones are found or ``20 x n_unrelated`` draws are spent.
    """
    if n_related < 0 or n_unrelated < 0:
        raise ConfigError(f"n_related {n_related} / n_unrelated {n_unrelated}: expected >= 0")
    rng = np.random.default_rng(seed)
    links = [(k, int(i), int(j)) for k, ls in enumerate(links_per_sentence) for i, j in sorted(ls)]
    related: list[WordPair] = []
    if links and n_related:
        pick = rng.choice(len(links), size=min(n_related, len(links)), replace=False)
        related = [(k, i, k, j) for k, i, j in (links[p] for p in sorted(pick))]
    unrelated: list[WordPair] = []
    if len({k for k, _, _ in links}) >= 2 and n_unrelated:
        seen: set[WordPair] = set()
        budget = 20 * n_unrelated
        while len(unrelated) < n_unrelated and budget > 0:
            draws = rng.integers(0, len(links), size=(2 * n_unrelated, 2))
            for a, b in draws:
                budget -= 1
                ks, i, _ = links[a]
                kt, _, j = links[b]
                pair = (ks, i, kt, j)
                if ks != kt and pair not in seen:
                    seen.add(pair)
                    unrelated.append(pair)
                    if len(unrelated) == n_unrelated:
                        break
                if budget <= 0:
                    break
    return WordPairs(related, unrelated)


def l2_distances(
    src_states: Sequence[np.ndarray],
    tgt_states: Sequence[np.ndarray],
    pairs: Sequence[WordPair],
    layer: int,
) -> np.ndarray:
    """float64 L2 distance of each pair's two word vectors at ``layer`` (per sentence,
    ``states[k]`` is ``[layers, n_words, dim]``; negative layers count from the end). A
    word without a vector (NaN) gives NaN."""
    out = np.empty(len(pairs), dtype=np.float64)
    for p, (ks, i, kt, j) in enumerate(pairs):
        try:
            a = np.asarray(src_states[ks][layer, i], dtype=np.float64)
            b = np.asarray(tgt_states[kt][layer, j], dtype=np.float64)
        except IndexError:
            raise InputError(
                f"l2_distances: pair {p} (source {ks}:{i}, target {kt}:{j}) or layer {layer} "
                "is outside the given states"
            ) from None
        out[p] = float(np.linalg.norm(a - b))
    return out


def _describe(d: np.ndarray, edges: np.ndarray) -> dict[str, Any]:
    counts, _ = np.histogram(d, bins=edges)
    return {
        "n": len(d),
        "mean": float(d.mean()) if len(d) else None,
        "std": float(d.std()) if len(d) else None,
        "median": float(np.median(d)) if len(d) else None,
        "histogram": [int(c) for c in counts],
        "below": int(np.count_nonzero(d < edges[0])),
        "above": int(np.count_nonzero(d > edges[-1])),
    }


def prob_related_closer(related: np.ndarray, unrelated: np.ndarray) -> float | None:
    """P(a related pair's distance < an unrelated pair's), ties counting 1/2: the ROC AUC
    of the distance separating the two samples (Mann-Whitney U / (n1 n2)); None if a sample
    is empty."""
    r = np.sort(np.asarray(related, dtype=np.float64))
    u = np.sort(np.asarray(unrelated, dtype=np.float64))
    if not len(r) or not len(u):
        return None
    below = np.searchsorted(r, u, side="left")  # related strictly closer than each u
    ties = np.searchsorted(r, u, side="right") - below
    return float((below.sum() + 0.5 * ties.sum()) / (len(r) * len(u)))


def summarise(
    related: Sequence[float] | np.ndarray,
    unrelated: Sequence[float] | np.ndarray,
    *,
    bins: Sequence[float] = DEFAULT_BINS,
) -> dict[str, Any]:
    """Statistics of the two distance samples (non-finite values dropped and counted):
    per sample ``n``, ``mean``, ``std`` (population), ``median``, ``histogram`` counts on
    ``bins`` (edges; the last bin includes its right edge) with ``below`` / ``above``;
    ``mean_difference`` (unrelated - related) and ``auc_related_closer``
    (:func:`prob_related_closer`)."""
    edges = np.asarray(bins, dtype=np.float64)
    if edges.ndim != 1 or len(edges) < 2 or np.any(np.diff(edges) <= 0):
        raise ConfigError("bins: expected at least two increasing edges")
    r = np.asarray(related, dtype=np.float64)
    u = np.asarray(unrelated, dtype=np.float64)
    dropped = int((~np.isfinite(r)).sum() + (~np.isfinite(u)).sum())
    r, u = r[np.isfinite(r)], u[np.isfinite(u)]
    rel, unrel = _describe(r, edges), _describe(u, edges)
    diff = None if rel["mean"] is None or unrel["mean"] is None else unrel["mean"] - rel["mean"]
    return {
        "related": rel,
        "unrelated": unrel,
        "bins": [float(e) for e in edges],
        "mean_difference": diff,
        "auc_related_closer": prob_related_closer(r, u),
        "dropped_non_finite": dropped,
    }
