"""Sentence retrieval and BUCC mining in blocks of a memory budget (issue 28): the budget
changes the memory, never the numbers; under a capped address space the blocked
similarities run where the whole ``n x m`` matrix does not."""

from __future__ import annotations

import capped_targets_retrieval as targets
import numpy as np
import pytest
from capped import run_capped

from xlalign.evaluation.tasks import retrieval as rt


def _whole_topk(queries: np.ndarray, index: np.ndarray, k: int):
    """The k nearest neighbours as before blocks by budget: the whole score matrix."""
    scores = queries @ index.T
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k] if k < scores.shape[1] else None
    if part is None:
        part = np.tile(np.arange(scores.shape[1]), (len(scores), 1))
    top = np.take_along_axis(scores, part, axis=1)
    order = np.argsort(-top, axis=1, kind="stable")
    return np.take_along_axis(top, order, axis=1), np.take_along_axis(part, order, axis=1)


@pytest.mark.parametrize("k", [1, 4, 37, 40])  # 40: every index row (no argpartition)
def test_topk_in_blocks_equals_the_whole_matrix(k: int) -> None:
    src, tgt = targets.sentence_pairs(300, 16)
    x, y = rt._normalize(src), rt._normalize(tgt[:40])
    want_sims, want_inds = _whole_topk(x, y, k)
    # 0.0001 MB: one row a block; 0.01 MB: 16 rows; 1000 MB: one block
    for budget in (0.0001, 0.01, 1000):
        sims, inds = rt._topk(x, y, k, budget)
        np.testing.assert_array_equal(inds, want_inds)
        np.testing.assert_allclose(sims, want_sims, rtol=0, atol=1e-12)


def test_nearest_in_blocks_equals_the_whole_matrix() -> None:
    src, tgt = targets.sentence_pairs(500, 16)
    x, y = rt._normalize(src), rt._normalize(tgt)
    want = np.argmax(x @ y.T, axis=1)
    assert 0.1 < np.mean(want == np.arange(500)) < 0.95  # a real task, neither 0 nor all
    for budget in (0.0001, 0.05, 1000):
        np.testing.assert_array_equal(rt._nearest(x, y, budget), want)


def test_the_budget_sizes_the_blocks() -> None:
    # 0.01 MB over 300 index rows: 10485 // (8 x 300) = 4 rows a block (_nearest),
    # 10485 // (16 x 300) = 2 (_topk)
    assert rt.rows_per_block(rt.NEAREST_BYTES_PER_CELL * 300, 0.01) == 4
    assert rt.rows_per_block(rt.TOPK_BYTES_PER_CELL * 300, 0.01) == 2
    src, tgt = targets.sentence_pairs(30, 8)
    x, y = rt._normalize(src), rt._normalize(tgt)
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="memory budget"):
            rt._nearest(x, y, bad)
        with pytest.raises(ValueError, match="memory budget"):
            rt._topk(x, y, 2, bad)


@pytest.mark.parametrize("margin", rt.MARGINS)
def test_mining_gives_the_same_candidates_for_any_budget(margin: str) -> None:
    src, tgt = targets.sentence_pairs(400, 16, seed=1, noise=0.8)
    whole = rt.mine_candidates(src, tgt[:350], margin=margin, budget_mb=1000)
    assert 100 < len(whole) <= 350
    for budget in (0.0001, 0.02, None):
        got = rt.mine_candidates(src, tgt[:350], margin=margin, budget_mb=budget)
        assert [c[:2] for c in got] == [c[:2] for c in whole]
        np.testing.assert_allclose([c[2] for c in got], [c[2] for c in whole], atol=1e-12)


def test_retrieval_and_the_layer_sweep_are_the_same_for_any_budget() -> None:
    src, tgt = targets.sentence_pairs(300, 16)
    states_s = np.stack([src, src * 2 + 0.1, tgt])
    states_t = np.stack([tgt, tgt, src])
    ref = rt.retrieval_accuracy(src, tgt, budget_mb=1000)
    sweep = rt.layer_sweep(states_s, states_t, budget_mb=1000)
    for budget in (0.0001, 0.1):
        got = rt.retrieval_accuracy(src, tgt, budget_mb=budget)
        assert got["predictions"] == ref["predictions"]
        assert got["accuracy"] == ref["accuracy"]
        assert rt.layer_sweep(states_s, states_t, budget_mb=budget) == sweep


def test_bucc_evaluate_is_the_same_for_any_budget() -> None:
    def split(seed: int) -> dict:
        src, tgt = targets.sentence_pairs(200, 16, seed=seed, noise=0.6)
        ids_s = [f"s{seed}-{i}" for i in range(200)]
        ids_t = [f"t{seed}-{i}" for i in range(150)]
        return {
            "src": src,
            "tgt": tgt[:150],
            "src_texts": [f"source {seed} {i}" for i in range(200)],
            "tgt_texts": [f"target {seed} {i}" for i in range(150)],
            "src_ids": ids_s,
            "tgt_ids": ids_t,
            "gold": [(ids_s[i], ids_t[i]) for i in range(0, 150, 2)],
        }

    dev, test = split(2), split(3)
    ref = rt.bucc_evaluate(dev, test, budget_mb=1000)
    assert ref["test"]["correct"] > 10
    for budget in (0.0001, 0.05):
        assert rt.bucc_evaluate(dev, test, budget_mb=budget) == ref


# --------------------------------------------------------------------------- capped

# Under a cap of 100 MB over the child's imports: retrieval over 4000 x 4000 sentences
# holds 128 MB of float64 cosines at once, mining 3000 x 3000 needs 144 MB (cosines and
# argpartition's order); in blocks of 8 MB both fit.
HEADROOM_MB = 100


def test_capped_retrieval() -> None:
    kw = {"n": 4000, "d": 32}
    assert HEADROOM_MB << 20 < rt.NEAREST_BYTES_PER_CELL * 4000 * 4000
    whole = run_capped(
        "capped_targets_retrieval:accuracy", {**kw, "budget_mb": 10_000}, headroom_mb=HEADROOM_MB
    )
    assert whole.out_of_memory, whole.error
    blocked = run_capped(
        "capped_targets_retrieval:accuracy", {**kw, "budget_mb": 8}, headroom_mb=HEADROOM_MB
    )
    assert blocked.ok, blocked.error
    ref = targets.accuracy(**kw)
    assert blocked.value["accuracy"] == ref["accuracy"]
    for d in rt.DIRECTIONS:
        np.testing.assert_array_equal(blocked.value["predictions"][d], ref["predictions"][d])


def test_capped_bucc_mining() -> None:
    kw = {"n": 3000, "m": 3000, "d": 32}
    assert HEADROOM_MB << 20 < rt.TOPK_BYTES_PER_CELL * 3000 * 3000
    whole = run_capped(
        "capped_targets_retrieval:mine", {**kw, "budget_mb": 10_000}, headroom_mb=HEADROOM_MB
    )
    assert whole.out_of_memory, whole.error
    blocked = run_capped(
        "capped_targets_retrieval:mine", {**kw, "budget_mb": 8}, headroom_mb=HEADROOM_MB
    )
    assert blocked.ok, blocked.error
    ref = targets.mine(**kw)
    assert len(ref) > 1000
    np.testing.assert_array_equal(blocked.value[:, :2], ref[:, :2])
    np.testing.assert_allclose(blocked.value[:, 2], ref[:, 2], atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normalize_divides_a_copy_in_place(dtype) -> None:
    x = np.random.default_rng(0).standard_normal((50, 7)).astype(dtype)
    x[3] = 0
    before = x.copy()
    x64 = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x64, axis=1, keepdims=True)
    want = x64 / np.where(norms > 0, norms, 1.0)  # as before: a second array
    got = rt._normalize(x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(x, before)  # the caller's array untouched
    assert got.dtype == np.float64 and not np.shares_memory(got, x)
