"""Targets of the capped-memory tests of sentence retrieval, BUCC mining and the
statistics over per-example predictions (issue 28), on data made here from a seed (so
that a child process and the test build the same). Run by :func:`capped.run_capped` in a
child whose address space is capped; each returns small arrays to compare with an
uncapped reference.

The child imports this module before it caps its address space, so what is mapped once
per process is set up here and counts in the base rather than in the headroom: the
library modules (scipy's, through the significance tests) and the lazy buffers of the
BLAS calls, argpartition and the random generators.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xlalign.evaluation.tasks.retrieval import mine_candidates, retrieval_accuracy
from xlalign.reporting import significance as sig


def _warm_up() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 16))
    s = a @ a.T
    np.argpartition(-s, 3, axis=1)
    np.argsort(s, axis=1, kind="stable")
    rng.integers(0, 10, size=(2, 10))
    sig.paired_bootstrap(rng.random(10), rng.random(10), iterations=3)


_warm_up()


def sentence_pairs(n: int, d: int, seed: int = 0, noise: float = 1.0) -> tuple[np.ndarray, ...]:
    """Two float32 sides of ``n`` sentence vectors, row ``i`` of each a noisy copy of the
    same vector (so that retrieval finds many, not all, golds)."""
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((n, d))
    src = (base + noise * rng.standard_normal((n, d))).astype(np.float32)
    tgt = (base + noise * rng.standard_normal((n, d))).astype(np.float32)
    return src, tgt


def accuracy(n: int, d: int, budget_mb: float | None = None) -> dict[str, Any]:
    """Accuracy@1 both ways over ``n`` pairs: the accuracies and the predictions."""
    src, tgt = sentence_pairs(n, d)
    res = retrieval_accuracy(src, tgt, budget_mb=budget_mb)
    return {
        "accuracy": res["accuracy"],
        "predictions": {k: np.asarray(v) for k, v in res["predictions"].items()},
    }


def mine(n: int, m: int, d: int, budget_mb: float | None = None) -> np.ndarray:
    """BUCC-style margin mining over ``n`` x ``m`` sentences (the first ``min(n, m)`` of
    each side parallel): the mined ``(src, tgt, score)`` rows."""
    src, tgt = sentence_pairs(max(n, m), d, seed=1, noise=0.8)
    got = mine_candidates(src[:n], tgt[:m], budget_mb=budget_mb)
    return np.array(got, dtype=np.float64).reshape(-1, 3)


def hits(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per-query 0/1 hits of two models on ``n`` queries."""
    rng = np.random.default_rng(seed)
    return (rng.random(n) < 0.62).astype(float), (rng.random(n) < 0.615).astype(float)


def span_counts(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence (correct, predicted, gold) span counts of two models on ``n``
    sentences."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 4, n)
    rows = []
    for _ in range(2):
        pred = rng.integers(0, 5, n)
        correct = np.minimum(rng.integers(0, 5, n), np.minimum(pred, gold))
        rows.append(np.stack([correct, pred, gold], axis=1))
    return rows[0], rows[1]


def bootstrap(n: int, iterations: int, budget_mb: float | None = None) -> dict[str, Any]:
    """The paired bootstrap of :func:`hits` over ``n`` queries."""
    a, b = hits(n)
    r = sig.paired_bootstrap(a, b, iterations=iterations, seed=3, budget_mb=budget_mb)
    return {"p": r.p_value, "ci": r.ci, "difference": r.difference}


def permutation(n: int, iterations: int, budget_mb: float | None = None) -> dict[str, Any]:
    """The approximate randomisation test of :func:`span_counts` over ``n`` sentences."""
    a, b = span_counts(n)
    r = sig.permutation_test_span_f1(a, b, iterations=iterations, seed=5, budget_mb=budget_mb)
    return {"p": r.p_value, "difference": r.difference}
