"""The randomised tests over per-example predictions in blocks of a memory budget (issue
28): numpy's generator gives the same stream drawn block by block as at once, so the
budget changes the memory, never a p-value; under a capped address space the blocked
resampling runs where the whole ``iterations x n`` matrix does not."""

from __future__ import annotations

import capped_targets_retrieval as targets
import numpy as np
import pytest
from capped import run_capped

from xlalign.reporting import significance as sig


def test_the_generator_gives_the_same_stream_in_blocks() -> None:
    # What the blocking rests on: rows drawn in pieces are the rows drawn at once.
    for n in (7, 1001):  # odd n: 32-bit draws that do not fill whole 64-bit words
        whole = np.random.default_rng(5).integers(0, n, size=(13, n))
        rng = np.random.default_rng(5)
        parts = np.concatenate([rng.integers(0, n, size=(r, n)) for r in (1, 3, 2, 7)])
        np.testing.assert_array_equal(parts, whole)
        uniform = np.random.default_rng(5).random((13, n))
        rng = np.random.default_rng(5)
        np.testing.assert_array_equal(
            np.concatenate([rng.random((1, n)) for _ in range(13)]), uniform
        )


def _whole_bootstrap(a: np.ndarray, b: np.ndarray, iterations: int, seed: int):
    """The paired bootstrap with the whole ``iterations x n`` index matrix at once."""
    d = a - b
    idx = np.random.default_rng(seed).integers(0, d.size, size=(iterations, d.size))
    means = d[idx].mean(axis=1)
    observed = d.mean()
    extreme = np.count_nonzero(np.abs(means - observed) >= abs(observed) - sig._TIE)
    return (extreme + 1) / (iterations + 1), tuple(np.percentile(means, [2.5, 97.5]))


def test_bootstrap_is_the_same_for_any_budget_and_as_the_whole_matrix() -> None:
    a, b = targets.hits(3001)
    p, ci = _whole_bootstrap(a, b, 500, 7)
    assert 0.001 < p < 0.9
    for budget in (0.0001, 0.3, None, 10_000):  # one resample a block ... all at once
        r = sig.paired_bootstrap(a, b, iterations=500, seed=7, budget_mb=budget)
        assert r.p_value == p
        assert r.ci == pytest.approx(ci, abs=0, rel=0)


def test_the_tests_give_what_they_gave_before_blocks_by_budget() -> None:
    # Values of the implementation before this change (blocks of 2**22 draws), same seeds:
    # the data of golden.py, made again here.
    rng = np.random.default_rng(11)
    a = (rng.random(3001) < 0.62).astype(float)
    b = (rng.random(3001) < 0.6).astype(float)
    a2 = (rng.random(50_001) < 0.62).astype(float)
    b2 = (rng.random(50_001) < 0.615).astype(float)
    for budget in (0.0001, 1, None):
        r = sig.paired_bootstrap(a, b, iterations=2000, seed=7, budget_mb=budget)
        assert r.p_value == 0.019490254872563718
        assert r.ci == (0.0053232255914695105, 0.053315561479506834)
        r = sig.paired_bootstrap(a2, b2, iterations=300, seed=3, budget_mb=budget)
        assert r.p_value == 0.009966777408637873
        assert r.ci == (0.0030579388412231754, 0.014221715565688667)
    rng = np.random.default_rng(12)
    n = 20001
    gold = rng.integers(0, 4, n)
    pa = rng.integers(0, 5, n)
    ca = np.minimum(rng.integers(0, 5, n), np.minimum(pa, gold))
    pb = rng.integers(0, 5, n)
    cb = np.minimum(rng.integers(0, 5, n), np.minimum(pb, gold))
    counts_a, counts_b = np.stack([ca, pa, gold], 1), np.stack([cb, pb, gold], 1)
    for budget in (0.0001, 1, None):
        r = sig.permutation_test_span_f1(
            counts_a, counts_b, iterations=500, seed=5, budget_mb=budget
        )
        assert r.p_value == 0.05189620758483034
        assert r.difference == -0.7219719185821347


def test_the_budget_sizes_the_blocks() -> None:
    # 1 MB / (16 bytes x 1000 draws) = 65 resamples a block
    assert sig._blocks(200, 1000, sig.BOOTSTRAP_BYTES_PER_DRAW, 1) == [65, 65, 65, 5]
    assert sig._blocks(3, 10**6, sig.BOOTSTRAP_BYTES_PER_DRAW, 1) == [1, 1, 1]
    assert sig._blocks(50, 10, sig.PERMUTATION_BYTES_PER_DRAW, None) == [50]
    with pytest.raises(ValueError, match="memory budget"):
        sig.paired_bootstrap([1.0, 0.0], [0.0, 0.0], budget_mb=0)


# --------------------------------------------------------------------------- capped

# Under a cap of 100 MB over the child's imports: 200 bootstrap resamples of 100k queries
# hold 320 MB at once (int64 indices and the float64 values they gather); 200 shuffles of
# 100k sentences 340 MB (uniforms, the boolean and float64 swaps); in blocks of 8 MB both
# fit, and give the p-values the uncapped run gives.
HEADROOM_MB = 100


@pytest.mark.parametrize(
    ("target", "per_draw"),
    [("bootstrap", sig.BOOTSTRAP_BYTES_PER_DRAW), ("permutation", sig.PERMUTATION_BYTES_PER_DRAW)],
)
def test_capped_resampling(target: str, per_draw: int) -> None:
    kw = {"n": 100_000, "iterations": 200}
    assert per_draw * 100_000 * 200 > HEADROOM_MB << 20
    name = f"capped_targets_retrieval:{target}"
    whole = run_capped(name, {**kw, "budget_mb": 10_000}, headroom_mb=HEADROOM_MB)
    assert whole.out_of_memory, whole.error
    blocked = run_capped(name, {**kw, "budget_mb": 8}, headroom_mb=HEADROOM_MB)
    assert blocked.ok, blocked.error
    ref = getattr(targets, target)(**kw)
    assert 0.01 < ref["p"] < 1
    assert blocked.value == ref
