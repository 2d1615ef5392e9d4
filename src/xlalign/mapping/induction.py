"""Dictionary induction: translation pairs read off two spaces that share one (aligned) space.

Self-learning alignment (MUSE's refinement, VecMap) and unsupervised evaluation need a
seed dictionary built from the spaces themselves. As in MUSE's ``dico_builder``:

* Only the ``max_rank`` most frequent words of *each* side are candidates (rows of a
  ``.vec`` are in frequency order), since rare words have noisy vectors (MUSE's
  ``dico_max_rank``, VecMap's vocabulary cutoff). Unlike MUSE, which retrieves over the
  whole vocabularies and then drops pairs beyond the rank, retrieval and the CSLS
  penalties are computed over the restricted vocabularies only (VecMap's way): a frequent
  word's neighbour is then always a frequent word.
* ``mode``: ``"forward"`` pairs every source word with its nearest target word (MUSE's
  S2T); ``"mutual"`` keeps the pairs that are each other's nearest neighbour (S2T&T2S);
  ``"union"`` is S2T|T2S.
* Scores are cosine (``"nn"``) or CSLS; CSLS is symmetric, so a pair has one score
  whichever direction found it. It is recomputed in float64 for the output.

Nearest-neighbour ties go to the more frequent word; the output is sorted by score
(descending), then source rank, then target rank, so it is deterministic.
"""

from __future__ import annotations

import logging
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from xlalign.core.device import resolve_device
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.muse import pair_problem
from xlalign.core.io import PathLike, atomic_open, write_json
from xlalign.evaluation.bli import (
    PAIR_SPACES,
    block_rows,
    check_retrieval,
    check_space_pair,
    csls_penalties,
    score_block,
    unit_rows,
)
from xlalign.mapping.pairs import pair_spaces
from xlalign.static.vectors import load_space

log = logging.getLogger(__name__)

MODES = ("mutual", "forward", "union")


@dataclass(frozen=True)
class InducedPair:
    """One induced translation; ranks are 1-based frequency ranks (row index + 1)."""

    src: str
    tgt: str
    score: float
    src_rank: int
    tgt_rank: int


def _nearest(
    queries: torch.Tensor,
    keys: torch.Tensor,
    r_queries: torch.Tensor | None,
    r_keys: torch.Tensor | None,
    *,
    batch_size: int | None,
    budget_mb: float | None,
    progress: bool,
    desc: str,
) -> np.ndarray:
    """Row of the best-scoring key of every query (the first, i.e. most frequent, on ties),
    in blocks of ``rows x keys`` float32 scores (``batch_size`` rows or what fits
    ``budget_mb`` with each query's vector)."""
    best = np.empty(queries.shape[0], dtype=np.int64)
    step = block_rows(keys.shape[0], batch_size, budget_mb, bytes_per_row=4 * queries.shape[1])
    for start in tqdm(range(0, queries.shape[0], step), desc=desc, disable=not progress):
        block = slice(start, start + step)
        r_q = None if r_queries is None else r_queries[block]
        scores = score_block(queries[block], keys, r_q, r_keys)
        best[block] = scores.argmax(dim=1).cpu().numpy()
        del scores  # freed before the next block is made, not after
    return best


def induce_dictionary(
    src_words: Sequence[str],
    src_vecs: np.ndarray,
    tgt_words: Sequence[str],
    tgt_vecs: np.ndarray,
    *,
    retrieval: str = "csls",
    csls_k: int = 10,
    max_rank: int | None = 20000,
    mode: str = "mutual",
    min_score: float | None = None,
    max_pairs: int | None = None,
    exclude_identical: bool = False,
    batch_size: int | None = None,
    budget_mb: float | None = None,
    device: str | torch.device | None = None,
    progress: bool = False,
    report: dict[str, Any] | None = None,
) -> list[InducedPair]:
    """Translation pairs between two aligned spaces, best first (module docstring).

    ``max_rank`` (None: no limit) keeps the most frequent rows of each side;
    ``min_score`` drops pairs scoring below it; ``exclude_identical`` drops pairs whose two
    words are the same string (after retrieval, so such a word yields no pair rather than
    its second-best neighbour); ``max_pairs`` keeps the best pairs. A ``csls_k`` larger
    than a (``max_rank``-cut) vocabulary is capped to it, with a warning, as
    :func:`xlalign.evaluation.bli.evaluate_bli` does; ``report`` (a dict, when given)
    then receives ``csls_k`` (the size used; None for ``"nn"``) and, when capped,
    ``csls_k_asked``, and ``unwritable_dropped``: the pairs left out because a MUSE
    dictionary cannot hold them (:func:`dictionary_pair_problem`). Raises
    :class:`InputError` when no pair is left, saying at which step they were lost.

    Memory: the candidate rows of both sides (``max_rank x d``) and one block of scores,
    ``batch_size`` rows or as many as fit ``budget_mb`` MB (None: the default budget of
    :mod:`xlalign.core.memory`; the configuration's ``memory.block_mb``); the
    ``max_rank x max_rank`` scores are never held whole.
    """
    check_retrieval(retrieval, csls_k)
    if mode not in MODES:
        raise ConfigError(f"mode: unknown induction mode {mode!r}; expected one of {MODES}")
    for key, value in (("max_rank", max_rank), ("max_pairs", max_pairs)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ConfigError(f"{key}: expected a positive integer or None, got {value!r}")
    check_space_pair(src_words, src_vecs, tgt_words, tgt_vecs)
    n_src = len(src_words) if max_rank is None else min(max_rank, len(src_words))
    n_tgt = len(tgt_words) if max_rank is None else min(max_rank, len(tgt_words))

    dev = resolve_device(device)
    src = unit_rows(np.asarray(src_vecs)[:n_src], dev)
    tgt = unit_rows(np.asarray(tgt_vecs)[:n_tgt], dev)
    r_t = r_s = None
    csls_k_used = min(csls_k, n_src, n_tgt)
    if report is not None:
        report["csls_k"] = csls_k_used if retrieval == "csls" else None
        if retrieval == "csls" and csls_k_used < csls_k:
            report["csls_k_asked"] = csls_k
    if retrieval == "csls":
        if csls_k_used < csls_k:
            log.warning(
                "csls_k %d is larger than a vocabulary (%d source, %d target candidate "
                "words); using %d neighbours",
                csls_k,
                n_src,
                n_tgt,
                csls_k_used,
            )
        r_t, r_s = csls_penalties(
            src, tgt, csls_k_used, batch_size=batch_size, budget_mb=budget_mb, progress=progress
        )
    opts: dict[str, Any] = {"batch_size": batch_size, "budget_mb": budget_mb, "progress": progress}
    forward = _nearest(src, tgt, r_t, r_s, desc="induce S2T", **opts)
    candidates: set[tuple[int, int]]
    if mode == "forward":
        candidates = {(i, int(j)) for i, j in enumerate(forward)}
    else:
        backward = _nearest(tgt, src, r_s, r_t, desc="induce T2S", **opts)
        if mode == "mutual":
            candidates = {(i, int(j)) for i, j in enumerate(forward) if backward[j] == i}
        else:
            candidates = {(i, int(j)) for i, j in enumerate(forward)}
            candidates |= {(int(i), j) for j, i in enumerate(backward)}

    pairs = sorted(candidates)
    if pairs:
        si = torch.as_tensor([i for i, _ in pairs], device=dev)
        ti = torch.as_tensor([j for _, j in pairs], device=dev)
        scores = (src[si].double() * tgt[ti].double()).sum(dim=1)
        if r_t is not None and r_s is not None:
            scores = 2 * scores - r_t[si].double() - r_s[ti].double()
        values = scores.cpu().tolist()
    else:
        values = []
    out = [
        InducedPair(src_words[i], tgt_words[j], float(v), i + 1, j + 1)
        for (i, j), v in zip(pairs, values, strict=True)
    ]
    identical = sum(p.src == p.tgt for p in out)
    if exclude_identical:
        out = [p for p in out if p.src != p.tgt]
    # A space's word may hold what a MUSE dictionary line cannot (a no-break space, which
    # fastText keeps in a word): such a pair would be written as a line that no dictionary
    # reader reads back.
    unwritable = [p for p in out if dictionary_pair_problem(p.src, p.tgt) is not None]
    if unwritable:
        out = [p for p in out if dictionary_pair_problem(p.src, p.tgt) is None]
        first = unwritable[0]
        log.warning(
            "%d induced pair(s) left out: a MUSE dictionary cannot hold them (e.g. %r: %s)",
            len(unwritable),
            (first.src, first.tgt),
            dictionary_pair_problem(first.src, first.tgt),
        )
    if report is not None:
        report["unwritable_dropped"] = len(unwritable)
    low = 0
    if min_score is not None:
        low = sum(p.score < min_score for p in out)
        out = [p for p in out if p.score >= min_score]
    out.sort(key=lambda p: (-p.score, p.src_rank, p.tgt_rank))
    if max_pairs is not None:
        out = out[:max_pairs]
    if not out:
        why = [
            f"{len(candidates)} {mode} {retrieval} candidate pairs among the {n_src} most "
            f"frequent source and {n_tgt} most frequent target words"
        ]
        if exclude_identical:
            why.append(f"{identical} removed as identical words")
        if min_score is not None:
            why.append(f"{low} scored below min_score={min_score}")
        raise InputError("no pair induced: " + "; ".join(why))
    return out


def dictionary_pair_problem(src: str, tgt: str) -> str | None:
    """Why ``(src, tgt)`` cannot be a line of a MUSE dictionary that reads back
    (:func:`xlalign.core.formats.muse.read_pairs`), or None. A word read with
    ``surrogateescape`` is written as its bytes and reads back with
    ``encoding_errors="surrogateescape"``, as VecMap reads its dictionaries."""
    return pair_problem((src, tgt))


def write_induced(pairs: Sequence[InducedPair], path: PathLike) -> None:
    """Write pairs in MUSE's dictionary format (``src tgt`` per line, in order), atomically.

    A word read with ``encoding_errors="surrogateescape"`` is written as the bytes it was
    read from, as the vector writers do."""
    with atomic_open(path, errors="surrogateescape") as fh:
        for p in pairs:
            fh.write(f"{p.src} {p.tgt}\n")


def induction_stats(pairs: Sequence[InducedPair]) -> dict[str, Any]:
    """Summary of an induced dictionary: sizes, identical pairs, score and rank spread."""
    if not pairs:
        return {"pairs": 0, "src_words": 0, "tgt_words": 0, "identical": 0}
    scores = [p.score for p in pairs]
    return {
        "pairs": len(pairs),
        "src_words": len({p.src for p in pairs}),
        "tgt_words": len({p.tgt for p in pairs}),
        "identical": sum(p.src == p.tgt for p in pairs),
        "score_min": min(scores),
        "score_median": statistics.median(scores),
        "score_max": max(scores),
        "src_rank_median": statistics.median(p.src_rank for p in pairs),
        "src_rank_max": max(p.src_rank for p in pairs),
        "tgt_rank_median": statistics.median(p.tgt_rank for p in pairs),
        "tgt_rank_max": max(p.tgt_rank for p in pairs),
    }


# --------------------------------------------------------------------------- over files


def induce(
    *,
    language: str,
    hub: str,
    pair: PathLike,
    hub_space: PathLike,
    out_path: PathLike,
    stats_path: PathLike,
    options: Mapping[str, Any],
    device: str | None = None,
    progress: bool = True,
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """Induce a ``hub-language`` dictionary (the paper's route to X2S-MA), write it and its
    stats. Retrieval runs in the pair's own mapped spaces, as VecMap's: ``pair`` is the
    language's pair file and ``hub_space`` the hub's written (normalised) space
    (:mod:`xlalign.mapping.pairs`); in blocks of ``budget_mb`` (:func:`induce_dictionary`)."""
    hub_sp, _ = load_space(hub_space)
    (xw, xv), (hw, hv), _ = pair_spaces(pair, hub_sp)
    used: dict[str, Any] = {}
    pairs = induce_dictionary(
        hw,
        hv,
        xw,
        xv,
        retrieval=options.get("retrieval", "csls"),
        csls_k=options.get("csls_k", 10),
        max_rank=options.get("max_rank", 20000),
        mode=options.get("mode", "mutual"),
        device=device,
        progress=progress,
        report=used,
        budget_mb=budget_mb,
    )
    write_induced(pairs, out_path)
    stats = {
        "language": language,
        "hub": hub,
        **dict(options),
        **used,
        "scored_in": PAIR_SPACES,
        **induction_stats(pairs),
    }
    write_json(stats_path, stats)
    return stats
