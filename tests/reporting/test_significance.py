"""Seed aggregation, paired tests and corrections: hand-computed values, scipy, behaviour."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from xlalign.evaluation.tasks.metrics import span_f1
from xlalign.reporting.examples import span_counts
from xlalign.reporting.significance import (
    adjust,
    aggregate,
    benjamini_hochberg,
    f1_from_counts,
    holm,
    paired_bootstrap,
    paired_ttest,
    permutation_test_span_f1,
    span_f1_from_counts,
)

# --------------------------------------------------------------------------- aggregate


def test_aggregate_by_hand() -> None:
    s = aggregate([1.0, 2.0, 3.0, 4.0])
    assert s.mean == pytest.approx(2.5)
    assert s.std == pytest.approx(math.sqrt(5 / 3))  # sum of squares 5, n - 1 = 3
    assert s.n == 4
    one = aggregate([7.5])
    assert (one.mean, one.std, one.n) == (7.5, None, 1)
    with pytest.raises(ValueError, match="no values"):
        aggregate([])
    with pytest.raises(ValueError, match="position 1"):
        aggregate([1.0, float("nan")])


# --------------------------------------------------------------------------- t-test


def test_paired_ttest_by_hand_and_scipy() -> None:
    a, b = [3.0, 5.0, 4.0, 6.0], [1.0, 2.0, 4.0, 3.0]
    # d = (2, 3, 0, 3): mean 2, sample variance (0 + 1 + 4 + 1) / 3 = 2, t = 2 / sqrt(2 / 4)
    res = paired_ttest(a, b)
    assert res.statistic == pytest.approx(2 * math.sqrt(2))
    assert res.p_value == pytest.approx(2 * stats.t.sf(2 * math.sqrt(2), df=3))
    assert (res.difference, res.n, res.direction) == (2.0, 4, ">")
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=50), rng.normal(size=50) + 0.2
    ref = stats.ttest_rel(x, y)
    res = paired_ttest(x, y)
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.p_value == pytest.approx(ref.pvalue)
    assert res.direction == ("<" if res.difference < 0 else ">")


def test_paired_ttest_degenerate_and_errors() -> None:
    same = paired_ttest([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert (same.statistic, same.p_value, same.difference, same.direction) == (0.0, 1.0, 0.0, "=")
    shifted = paired_ttest([2.0, 3.0, 4.0], [1.0, 2.0, 3.0])
    assert shifted.p_value == 0.0 and shifted.statistic == math.inf
    with pytest.raises(ValueError, match="3 scores for A but 4 for B"):
        paired_ttest([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="at least 2"):
        paired_ttest([1.0], [2.0])


# --------------------------------------------------------------------------- span F1


def _random_tags(rng: np.random.Generator, n: int) -> list[list[str]]:
    tags = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-ORG"]
    return [list(rng.choice(tags, size=int(rng.integers(0, 9)))) for _ in range(n)]


def _corrupt(rng: np.random.Generator, sents: list[list[str]], rate: float) -> list[list[str]]:
    tags = ["O", "B-PER", "I-PER", "B-LOC", "B-ORG"]
    return [[str(rng.choice(tags)) if rng.random() < rate else t for t in s] for s in sents]


def test_f1_from_counts_equals_span_f1() -> None:
    rng = np.random.default_rng(0)
    gold = _random_tags(rng, 60)
    for rate in (0.0, 0.2, 0.6, 1.0):
        pred = _corrupt(rng, gold, rate)
        ref = span_f1(gold, pred)
        counts = span_counts(gold, pred)
        assert counts.sum(axis=0).tolist() == [ref["n_correct"], ref["n_pred"], ref["n_gold"]]
        assert span_f1_from_counts(counts) == pytest.approx(ref["f1"])
    assert f1_from_counts(0, 0, 0) == 0.0
    assert f1_from_counts([2, 0], [4, 3], [4, 1]).tolist() == [50.0, 0.0]


def _exact_randomisation(a: np.ndarray, b: np.ndarray) -> float:
    """The exact permutation p-value over all 2^n swaps (the share at least as extreme)."""
    observed = abs(span_f1_from_counts(a) - span_f1_from_counts(b))
    extreme = 0
    patterns = list(itertools.product([False, True], repeat=len(a)))
    for swap in patterns:
        s = np.asarray(swap)[:, None]
        x, y = np.where(s, b, a), np.where(s, a, b)
        extreme += abs(span_f1_from_counts(x) - span_f1_from_counts(y)) >= observed - 1e-12
    return extreme / len(patterns)


def test_permutation_test_approaches_the_exact_test() -> None:
    # (correct, n_pred, n_gold) per sentence; 4 sentences -> 16 swap patterns
    a = np.array([[2, 2, 2], [1, 1, 2], [3, 3, 3], [0, 1, 1]])
    b = np.array([[1, 2, 2], [0, 2, 2], [2, 3, 3], [0, 0, 1]])
    exact = _exact_randomisation(a, b)
    assert 0.05 < exact < 1
    res = permutation_test_span_f1(a, b, iterations=20000, seed=1)
    assert res.p_value == pytest.approx(exact, abs=0.015)
    assert res.difference == pytest.approx(span_f1_from_counts(a) - span_f1_from_counts(b))
    assert res.n == 4 and res.iterations == 20000 and res.direction == ">"


def test_permutation_test_pools_seeds() -> None:
    rng = np.random.default_rng(5)
    gold = _random_tags(rng, 30)
    seeds_a = np.stack([span_counts(gold, _corrupt(rng, gold, 0.1)) for _ in range(3)])
    seeds_b = np.stack([span_counts(gold, _corrupt(rng, gold, 0.3)) for _ in range(3)])
    pooled = permutation_test_span_f1(seeds_a, seeds_b, iterations=200, seed=4)
    flat = permutation_test_span_f1(
        seeds_a.reshape(-1, 3), seeds_b.reshape(-1, 3), iterations=200, seed=4
    )
    assert pooled == flat and pooled.n == 90


def test_permutation_test_errors() -> None:
    a = np.array([[1, 1, 1], [0, 0, 2]])
    with pytest.raises(ValueError, match="row 1 has 2 gold chunks for A but 1"):
        permutation_test_span_f1(a, np.array([[1, 1, 1], [0, 0, 1]]))
    with pytest.raises(ValueError, match="2 sentence rows for A but 1"):
        permutation_test_span_f1(a, a[:1])
    with pytest.raises(ValueError, match="correct <= n_pred"):
        permutation_test_span_f1(np.array([[2, 1, 2]]), np.array([[0, 0, 2]]))
    with pytest.raises(ValueError, match="shape"):
        permutation_test_span_f1(np.ones((2, 2)), np.ones((2, 2)))


# --------------------------------------------------------------------------- bootstrap


def test_paired_bootstrap_by_hand() -> None:
    # d = (1, 0): delta = 0.5; resampled means 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4;
    # |delta* - 0.5| >= 0.5 for 0 and 1: p -> 1/2.
    res = paired_bootstrap([1.0, 0.0], [0.0, 0.0], iterations=20000, seed=2)
    assert res.p_value == pytest.approx(0.5, abs=0.015)
    assert res.difference == 0.5 and res.statistic == 0.5 and res.n == 2
    assert res.ci == (0.0, 1.0)
    with pytest.raises(ValueError, match="2 scores for A but 3 for B"):
        paired_bootstrap([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="iterations"):
        paired_bootstrap([1, 0], [0, 1], iterations=0)


def test_paired_bootstrap_ci_brackets_the_difference() -> None:
    rng = np.random.default_rng(9)
    a = (rng.random(400) < 0.6).astype(float)
    b = (rng.random(400) < 0.5).astype(float)
    res = paired_bootstrap(a, b, seed=0)
    low, high = res.ci
    assert low < res.difference < high
    se = np.std(a - b, ddof=1) / math.sqrt(400)  # the normal approximation's interval
    assert low == pytest.approx(res.difference - 1.96 * se, abs=0.02)
    assert high == pytest.approx(res.difference + 1.96 * se, abs=0.02)


# --------------------------------------------------------------------------- every test


def _differ() -> dict[str, tuple]:
    """Model A better than B by construction, one input per test."""
    rng = np.random.default_rng(11)
    gold = _random_tags(rng, 120)
    return {
        "t-test": (rng.normal(1.0, 1.0, 80) + 0.8, rng.normal(1.0, 1.0, 80)),
        "permutation": (span_counts(gold, gold), span_counts(gold, _corrupt(rng, gold, 0.5))),
        "bootstrap": ((rng.random(300) < 0.8) * 1.0, (rng.random(300) < 0.5) * 1.0),
    }


def _run(test: str, a, b, seed: int = 0):
    if test == "t-test":
        return paired_ttest(a, b)
    if test == "permutation":
        return permutation_test_span_f1(a, b, seed=seed)
    return paired_bootstrap(a, b, seed=seed)


@pytest.mark.parametrize("test", ["t-test", "permutation", "bootstrap"])
def test_models_that_differ_are_significant(test: str) -> None:
    a, b = _differ()[test]
    res = _run(test, a, b)
    assert res.p_value < 0.05
    assert res.direction == ">"
    flipped = _run(test, b, a)
    assert flipped.p_value < 0.05 and flipped.direction == "<"


@pytest.mark.parametrize("test", ["t-test", "permutation", "bootstrap"])
def test_identical_models_are_not(test: str) -> None:
    a, _ = _differ()[test]
    res = _run(test, a, a.copy())
    assert res.p_value > 0.5
    assert res.p_value == 1.0 and res.direction == "="


@pytest.mark.parametrize("test", ["permutation", "bootstrap"])
def test_seeded(test: str) -> None:
    rng = np.random.default_rng(13)
    if test == "permutation":
        gold = _random_tags(rng, 40)
        a = span_counts(gold, _corrupt(rng, gold, 0.3))
        b = span_counts(gold, _corrupt(rng, gold, 0.35))
    else:
        # 10 queries only A gets right, 6 only B, 44 alike
        a = np.r_[np.ones(10), np.zeros(6), np.ones(20), np.zeros(24)]
        b = np.r_[np.zeros(10), np.ones(6), np.ones(20), np.zeros(24)]
    first = _run(test, a, b, seed=7)
    assert 0.01 < first.p_value < 0.99  # not degenerate, so another seed can move it
    assert _run(test, a, b, seed=7) == first
    others = {_run(test, a, b, seed=s).p_value for s in range(8, 12)}
    assert others != {first.p_value}


# --------------------------------------------------------------------------- corrections


def test_holm_by_hand() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> running
    # max 0.02, 0.03, 0.06, 0.06
    adj = holm([0.01, 0.04, 0.03, 0.005])
    assert adj == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # NaN kept and not counted: m = 2
    adj = holm([0.01, float("nan"), 0.04])
    assert adj[0] == pytest.approx(0.02) and math.isnan(adj[1]) and adj[2] == pytest.approx(0.04)
    assert holm([0.5, 0.6]).tolist() == [1.0, 1.0]  # clipped to 1, monotone
    assert holm([]).size == 0


def test_benjamini_hochberg_against_scipy() -> None:
    rng = np.random.default_rng(21)
    for m in (1, 2, 7, 40):
        p = rng.random(m) ** 3
        assert benjamini_hochberg(p) == pytest.approx(stats.false_discovery_control(p))
    # by hand: sorted 0.01, 0.02, 0.04 times 3/1, 3/2, 3/3 -> 0.03, 0.03, 0.04
    assert benjamini_hochberg([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.03])
    p = np.array([0.2, np.nan, 0.01, 0.03, np.nan])
    adj = benjamini_hochberg(p)
    assert np.isnan(adj[[1, 4]]).all()
    kept = ~np.isnan(p)
    assert adj[kept] == pytest.approx(stats.false_discovery_control(p[kept]))


def test_adjusted_pvalues_are_monotone_and_named() -> None:
    rng = np.random.default_rng(4)
    p = rng.random(25) ** 2
    order = np.argsort(p)
    for method in ("holm", "benjamini-hochberg"):
        adj = adjust(p, method)
        assert (np.diff(adj[order]) >= 0).all()
        assert (adj >= p).all() and (adj <= 1).all()
    assert (holm(p) >= benjamini_hochberg(p)).all()
    with pytest.raises(ValueError, match="unknown correction"):
        adjust(p, "bonferroni")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        holm([0.5, 1.5])
