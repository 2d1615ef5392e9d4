"""Word alignment read off an encoder's layer-l word vectors, scored by AER at every
layer (004 section 4.4, Figure 4: "layer-0 stands for the word embedding layer").

Two extraction methods over the similarity matrix ``S`` of a sentence pair (source words
x target words):

* ``argmax`` (SimAlign's "Argmax", Jalili Sabet et al. 2020): link ``(i, j)`` iff ``j`` is
  the most similar target word of ``i`` *and* ``i`` the most similar source word of ``j``
  (the intersection of the two directions), on cosine similarities.
* ``ot``: the optimal-transport aligner of XLM-Align (Chi et al. 2021c) that 004 uses, as
  its public word aligner (``word_aligner/xlmalign-ot-aligner.py``) computes it: the
  similarity matrix itself is the Sinkhorn kernel (``K = S``, i.e. cost ``C = -log S`` with
  entropic weight 1), and ``iterations`` (default 2, the aligner's ``--sinkhorn_iter``)
  rounds of Sinkhorn-Knopp scaling are run, each dividing every column by its sum
  (``xi``) and then every row of that by its sum (``pi``): unit target and source
  marginals, not run to convergence. The links are the intersection of the forward
  argmax (best column of each row of ``pi``) and the backward argmax (best row of each
  column of ``xi``). With 0 iterations it is ``argmax`` on ``S``.

How this differs from the public aligner, and why:

* Similarities here are cosines of word vectors. The public aligner uses dot products of
  hidden states; after one full scaling round, a matrix ``D1 S D2`` (row and column norms
  as diagonal factors) gives the same plan as ``S``, so with 2 or more iterations and
  positive similarities both give the same links.
* The public aligner clamps entries <= 0 with ``S[S<=0].fill_(1e-6)``, which fills a copy
  and changes nothing; here they are really clamped to ``floor`` (1e-6), which a log-domain
  computation (float64, stable for any scale) needs. The links differ only where a
  similarity is not positive.
* The public aligner encodes each sentence pair concatenated (``<s> src </s> tgt </s>``)
  and aligns subwords (a word pair is linked when any of its subwords are); here each
  sentence is encoded alone (:func:`xlalign.analysis.alignment_score.layer_states`) and
  words are the mean of their subwords, as SimAlign's word-level variant, so that one
  set of vectors serves every analysis and any encoder (with or without a pair input).

Words without a vector (NaN rows, cut off by the length limit) get no link.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.wordalign.aer import AERResult, score
from xlalign.wordalign.symmetrize import Link

METHODS = ("argmax", "ot")
#: Sinkhorn rounds of the public XLM-Align word aligner (``--sinkhorn_iter``).
OT_ITERATIONS = 2
OT_FLOOR = 1e-6


def similarity(src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    """Cosine similarity matrix ``[n_src, n_tgt]`` (float64; a zero vector has 0)."""
    a = np.asarray(src, dtype=np.float64)
    b = np.asarray(tgt, dtype=np.float64)
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    a = np.divide(a, na, out=np.zeros_like(a), where=na > 0)
    b = np.divide(b, nb, out=np.zeros_like(b), where=nb > 0)
    return a @ b.T


def _intersect(forward_of: np.ndarray, backward_of: np.ndarray) -> set[Link]:
    """Links (i, forward_of[i]) whose column's backward choice is i."""
    return {(i, int(j)) for i, j in enumerate(forward_of) if backward_of[j] == i}


def argmax_align(sim: np.ndarray) -> set[Link]:
    """SimAlign's Argmax: ``(i, j)`` iff ``j = argmax_k sim[i, k]`` and ``i = argmax_k
    sim[k, j]`` (ties: the lowest index, as ``numpy.argmax``)."""
    sim = np.asarray(sim, dtype=np.float64)
    if sim.ndim != 2:
        raise InputError(f"argmax_align: expected a 2-d similarity matrix, got {sim.shape}")
    if 0 in sim.shape:
        return set()
    return _intersect(sim.argmax(axis=1), sim.argmax(axis=0))


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    return m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def sinkhorn_scaling(
    sim: np.ndarray, iterations: int = OT_ITERATIONS, floor: float = OT_FLOOR
) -> tuple[np.ndarray, np.ndarray]:
    """``(pi, xi)`` after ``iterations`` rounds of XLM-Align's scaling of ``K =
    max(sim, floor)`` (see the module docstring): ``xi`` = the last column-normalised
    matrix, ``pi`` = ``xi`` with rows normalised (both ``K`` when ``iterations`` is 0).
    Computed on ``log K`` in float64."""
    if iterations < 0:
        raise ConfigError(f"ot iterations: expected an integer >= 0, got {iterations}")
    if not floor > 0:
        raise ConfigError(f"ot floor: expected a positive number, got {floor}")
    log_pi = np.log(np.maximum(np.asarray(sim, dtype=np.float64), floor))
    log_xi = log_pi
    for _ in range(iterations):
        log_xi = log_pi - _logsumexp(log_pi, axis=0)
        log_pi = log_xi - _logsumexp(log_xi, axis=1)
    return np.exp(log_pi), np.exp(log_xi)


def ot_align(
    sim: np.ndarray, *, iterations: int = OT_ITERATIONS, floor: float = OT_FLOOR
) -> set[Link]:
    """XLM-Align's optimal-transport links: forward argmax of each row of ``pi``
    intersected with the backward argmax of each column of ``xi``
    (:func:`sinkhorn_scaling`)."""
    sim = np.asarray(sim, dtype=np.float64)
    if sim.ndim != 2:
        raise InputError(f"ot_align: expected a 2-d similarity matrix, got {sim.shape}")
    if 0 in sim.shape:
        return set()
    pi, xi = sinkhorn_scaling(sim, iterations, floor)
    return _intersect(pi.argmax(axis=1), xi.argmax(axis=0))


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ConfigError(f"alignment method {method!r}: expected one of {', '.join(METHODS)}")


def align_pair(
    src: np.ndarray, tgt: np.ndarray, method: str, *, ot_iterations: int = OT_ITERATIONS
) -> set[Link]:
    """Links of one sentence pair from its word vectors ``[n, dim]`` (NaN rows unlinked)."""
    _check_method(method)
    src = np.asarray(src, dtype=np.float64)
    tgt = np.asarray(tgt, dtype=np.float64)
    rows = np.flatnonzero(~np.isnan(src).any(axis=1)) if src.size else np.zeros(0, int)
    cols = np.flatnonzero(~np.isnan(tgt).any(axis=1)) if tgt.size else np.zeros(0, int)
    if not len(rows) or not len(cols):
        return set()
    sim = similarity(src[rows], tgt[cols])
    links = argmax_align(sim) if method == "argmax" else ot_align(sim, iterations=ot_iterations)
    return {(int(rows[i]), int(cols[j])) for i, j in links}


def align_corpus(
    states_src: Sequence[np.ndarray],
    states_tgt: Sequence[np.ndarray],
    layer: int,
    method: str,
    *,
    ot_iterations: int = OT_ITERATIONS,
) -> list[set[Link]]:
    """Per sentence pair, the links of ``method`` at ``layer`` (``states[k]``:
    ``[layers, n_words, dim]``, as :func:`~xlalign.analysis.alignment_score.layer_states`)."""
    if len(states_src) != len(states_tgt):
        raise InputError(
            f"align_corpus: {len(states_src)} source and {len(states_tgt)} target sentences"
        )
    return [
        align_pair(s[layer], t[layer], method, ot_iterations=ot_iterations)
        for s, t in zip(states_src, states_tgt, strict=True)
    ]


def aer_by_layer(
    states_src: Sequence[np.ndarray],
    states_tgt: Sequence[np.ndarray],
    gold: Mapping[int, tuple[set[Link], set[Link]]],
    methods: Sequence[str] = METHODS,
    *,
    ot_iterations: int = OT_ITERATIONS,
) -> dict[str, list[AERResult]]:
    """``{method: [AER result at layer 0, 1, ..., depth]}`` against ``gold`` (sentence
    index -> (sure, possible), as :func:`xlalign.wordalign.aer.read_gold`)."""
    for m in methods:
        _check_method(m)
    if not len(states_src):
        raise InputError("aer_by_layer: no sentence pairs")
    if len(states_src) != len(states_tgt):
        raise InputError(
            f"aer_by_layer: {len(states_src)} source and {len(states_tgt)} target sentences"
        )
    # the word counts of every pair, so that a gold link outside its sentence is refused
    lengths = (
        [["w"] * int(np.asarray(s).shape[1]) for s in states_src],
        [["w"] * int(np.asarray(t).shape[1]) for t in states_tgt],
    )
    depth = int(np.asarray(states_src[0]).shape[0])
    return {
        m: [
            score(
                align_corpus(states_src, states_tgt, layer, m, ot_iterations=ot_iterations),
                gold,
                sentences=lengths,
            )
            for layer in range(depth)
        ]
        for m in methods
    }
