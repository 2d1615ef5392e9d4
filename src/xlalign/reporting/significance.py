"""Seed aggregation, paired significance tests and multiple-comparison corrections.

Pure functions over numpy arrays; every randomised test takes a ``seed`` (numpy's
``default_rng``), so the same inputs and seed give the same p-value. Each function
restates the published definition it implements:

* :func:`aggregate`: mean, sample standard deviation (``ddof=1``) and n over seeds.
* :func:`paired_ttest`: the two-sided paired t-test of 003 (Student 1908; scipy's
  ``ttest_rel``) on per-example scores of two models, each already averaged over seeds.
* :func:`permutation_test_span_f1`: 003's test for NER, approximate randomisation
  (Noreen 1989; Yeh 2000) of micro span F1 over the per-seed predictions concatenated.
* :func:`paired_bootstrap`: the paired bootstrap for BLI and retrieval (Efron & Tibshirani
  1993, section 16.4; Koehn 2004; Berg-Kirkpatrick et al. 2012), two-sided by the shift
  method.
* :func:`holm`, :func:`benjamini_hochberg`: adjusted p-values for a family of tests
  (Holm 1979; Benjamini & Hochberg 1995).

Randomised p-values carry the ``+1`` correction, ``(count + 1) / (iterations + 1)``
(Davison & Hinkley 1997, eq. 4.11; Phipson & Smyth 2010): the observed data count as one
of the resamples, so no p-value is 0 and the test keeps its size. Two models that agree on
every example get p = 1 from every test.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from xlalign.core.memory import rows_per_block

__all__ = [
    "CORRECTIONS",
    "DEFAULT_ITERATIONS",
    "PairedResult",
    "Summary",
    "adjust",
    "aggregate",
    "benjamini_hochberg",
    "f1_from_counts",
    "holm",
    "paired_bootstrap",
    "paired_ttest",
    "permutation_test_span_f1",
    "span_f1_from_counts",
]

#: Resamples of the randomised tests unless told otherwise (003: 1,000).
DEFAULT_ITERATIONS = 1000
#: Corrections :func:`adjust` knows, by the name tables print.
CORRECTIONS = ("holm", "benjamini-hochberg")

#: Working bytes per resample and example: the bootstrap's int64 indices and the float64
#: differences they gather; the randomisation's float64 uniforms, their float64 0/1 swaps
#: and the boolean between.
BOOTSTRAP_BYTES_PER_DRAW = 8 + 8
PERMUTATION_BYTES_PER_DRAW = 8 + 8 + 1
#: Two statistics closer than this count as equal (float noise of sums of the same counts).
_TIE = 1e-9


# --------------------------------------------------------------------------- aggregation


@dataclass(frozen=True)
class Summary:
    """A metric over seeds: mean, sample standard deviation (None below two seeds), n."""

    mean: float
    std: float | None
    n: int


def aggregate(values: ArrayLike) -> Summary:
    """Mean and sample standard deviation (``ddof=1``, the unbiased variance's root, as
    papers report "mean ± std over n seeds") of one metric's values over seeds.

    Raises ``ValueError`` for no values or a non-finite one.
    """
    arr = _vector(values, "values")
    if arr.size == 0:
        raise ValueError("aggregate: no values; expected one per seed")
    std = float(np.std(arr, ddof=1)) if arr.size >= 2 else None
    return Summary(mean=float(np.mean(arr)), std=std, n=int(arr.size))


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class PairedResult:
    """The outcome of comparing model A with model B on the same examples.

    ``difference`` is A minus B: the mean per-example difference (t-test, bootstrap) or
    the difference of micro F1 (permutation test), so its sign says which model is
    better. ``statistic`` is the test's own statistic (t; the F1 difference; the mean
    difference). ``n`` counts the paired examples (for the permutation test, sentence
    rows over all seeds). ``iterations`` and ``seed`` are None for the t-test; ``ci`` is
    the bootstrap's 95 % percentile interval of the difference (None for the others).
    """

    test: str
    statistic: float
    p_value: float
    difference: float
    n: int
    iterations: int | None = None
    seed: int | None = None
    ci: tuple[float, float] | None = None

    @property
    def direction(self) -> str:
        """``">"`` when A scored higher, ``"<"`` when lower, ``"="`` when equal."""
        return ">" if self.difference > 0 else "<" if self.difference < 0 else "="

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci) if self.ci is not None else None
        out["direction"] = self.direction
        return out


# --------------------------------------------------------------------------- t-test


def paired_ttest(a: ArrayLike, b: ArrayLike) -> PairedResult:
    """Two-sided paired t-test of per-example scores ``a`` and ``b`` (same examples, same
    order), as 003 tests QA and NLI: each example's score averaged over fine-tuning seeds
    first, then ``t = mean(d) / (sd(d) / sqrt(n))`` with ``d = a - b`` and ``n - 1``
    degrees of freedom (scipy's ``ttest_rel``).

    When every difference is 0 the statistic is 0 and p = 1 (scipy returns NaN there);
    when the differences are constant but not 0, t is infinite and p = 0.
    """
    x, y = _paired(a, b, "paired_ttest", minimum=2)
    d = x - y
    name = "paired t-test"
    n = int(d.size)
    if not np.any(d):
        return PairedResult(name, 0.0, 1.0, 0.0, n)
    if np.all(d == d[0]):  # no variance: scipy's limit, without its precision warning
        return PairedResult(name, float(np.copysign(np.inf, d[0])), 0.0, float(d[0]), n)
    res = stats.ttest_rel(x, y, alternative="two-sided")
    return PairedResult(name, float(res.statistic), float(res.pvalue), float(d.mean()), n)


# --------------------------------------------------------------------------- span F1


def f1_from_counts(correct: ArrayLike, n_pred: ArrayLike, n_gold: ArrayLike) -> np.ndarray:
    """Micro F1 in [0, 100] from summed chunk counts, elementwise: ``2c / (p + g)`` (the
    harmonic mean of ``c / p`` and ``c / g``), 0 when nothing is correct, as
    :func:`xlalign.evaluation.tasks.metrics.span_f1` defines it."""
    c = np.asarray(correct, dtype=np.float64)
    total = np.asarray(n_pred, dtype=np.float64) + np.asarray(n_gold, dtype=np.float64)
    return np.where(c > 0, 200.0 * c / np.where(total > 0, total, 1.0), 0.0)


def span_f1_from_counts(counts: ArrayLike) -> float:
    """Micro span F1 in [0, 100] of per-sentence ``(correct, n_pred, n_gold)`` rows
    (:func:`xlalign.reporting.examples.span_counts`): the counts summed, then
    :func:`f1_from_counts`; equals ``span_f1(...)["f1"]`` on the same sentences."""
    rows = _counts(counts, "span_f1_from_counts")
    c, p, g = rows.sum(axis=0)
    return float(f1_from_counts(c, p, g))


def permutation_test_span_f1(
    counts_a: ArrayLike,
    counts_b: ArrayLike,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
    budget_mb: float | None = None,
) -> PairedResult:
    """003's NER test: approximate randomisation of the micro span F1 difference.

    ``counts_a``/``counts_b``: per-sentence ``(correct, n_pred, n_gold)`` rows of model A
    and model B, shape ``(sentences, 3)`` or ``(seeds, sentences, 3)``; a 3-D array is the
    per-seed predictions concatenated (seed i of A paired with seed i of B), as 003 pools
    its runs. Row ``j`` of A and row ``j`` of B must be the same sentence (same
    ``n_gold``).

    Under the null hypothesis the two models' outputs are exchangeable, so each sentence's
    A and B counts are swapped with probability 1/2 in each of ``iterations`` shuffles
    (Noreen 1989, ch. 2; Yeh 2000); micro F1 is recomputed from the summed counts and
    ``p = (#{|F1*_A - F1*_B| >= |F1_A - F1_B|} + 1) / (iterations + 1)``.

    The shuffles are drawn in blocks of resamples within ``budget_mb`` (``memory.block_mb``;
    :func:`_blocks`); the uniforms come from one stream in the same order whatever the
    block, so the budget never changes the p-value.
    """
    a = _counts(counts_a, "permutation_test_span_f1 (A)")
    b = _counts(counts_b, "permutation_test_span_f1 (B)")
    if a.shape != b.shape:
        raise ValueError(
            f"permutation_test_span_f1: {a.shape[0]} sentence rows for A but {b.shape[0]} "
            "for B; expected the same sentences (and seeds) for both models"
        )
    if not np.array_equal(a[:, 2], b[:, 2]):
        j = int(np.flatnonzero(a[:, 2] != b[:, 2])[0])
        raise ValueError(
            f"permutation_test_span_f1: row {j} has {a[j, 2]} gold chunks for A but "
            f"{b[j, 2]} for B; rows must be the same sentences in the same order"
        )
    _check_iterations(iterations)
    tot_a, tot_b = a.sum(axis=0).astype(np.float64), b.sum(axis=0).astype(np.float64)
    observed = float(f1_from_counts(*tot_a) - f1_from_counts(*tot_b))
    gold = tot_a[2]
    delta = (b[:, :2] - a[:, :2]).astype(np.float64)  # what a swap moves from B to A
    rng = np.random.default_rng(seed)
    n = a.shape[0]
    extreme = 0
    for size in _blocks(iterations, n, PERMUTATION_BYTES_PER_DRAW, budget_mb):
        swap = (rng.random((size, n)) < 0.5).astype(np.float64)
        moved = swap @ delta  # exact: sums of integer counts
        f_a = f1_from_counts(tot_a[0] + moved[:, 0], tot_a[1] + moved[:, 1], gold)
        f_b = f1_from_counts(tot_b[0] - moved[:, 0], tot_b[1] - moved[:, 1], gold)
        extreme += int(np.count_nonzero(np.abs(f_a - f_b) >= abs(observed) - _TIE))
        del swap  # freed before the next block is drawn
    return PairedResult(
        "approximate randomisation (span F1)",
        observed,
        (extreme + 1) / (iterations + 1),
        observed,
        n,
        iterations=iterations,
        seed=seed,
    )


# --------------------------------------------------------------------------- bootstrap


def paired_bootstrap(
    a: ArrayLike,
    b: ArrayLike,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
    budget_mb: float | None = None,
) -> PairedResult:
    """Paired bootstrap test of the mean per-query score, for BLI and retrieval.

    ``a``/``b``: per-query scores of two models on the same queries (hits 0/1, or any
    float). With ``d = a - b`` and ``delta = mean(d)``, ``iterations`` bootstrap samples
    draw n query indices with replacement (the same indices for both models, so the
    pairing is kept) and give ``delta*_i = mean(d[indices_i])``. The samples are centred
    on ``delta``, which approximates the distribution of the mean difference under the
    null hypothesis of no difference (the shift method: Efron & Tibshirani 1993, section
    16.4; the two-sided form of Berg-Kirkpatrick et al. 2012's ``delta* > 2 delta``):

    ``p = (#{i: |delta*_i - delta| >= |delta|} + 1) / (iterations + 1)``.

    Koehn (2004) counts the samples where the winner changes; for a symmetric bootstrap
    distribution that one-sided share is about half of this p-value. ``ci`` is the 95 %
    percentile interval of ``delta*``.

    The resamples' indices are drawn in blocks of resamples within ``budget_mb``
    (``memory.block_mb``; :func:`_blocks`), never as one ``iterations x n`` matrix
    (1,000 x 300k int64 would be 2.4 GB); numpy's ``Generator.integers`` gives the same
    stream drawn row by row as at once, so the budget never changes the p-value or ``ci``.
    """
    x, y = _paired(a, b, "paired_bootstrap", minimum=1)
    _check_iterations(iterations)
    d = x - y
    observed = float(d.mean())
    rng = np.random.default_rng(seed)
    n = d.size
    means = np.empty(iterations, dtype=np.float64)
    done = 0
    for size in _blocks(iterations, n, BOOTSTRAP_BYTES_PER_DRAW, budget_mb):
        idx = rng.integers(0, n, size=(size, n))
        means[done : done + size] = d[idx].mean(axis=1)
        done += size
        del idx  # freed before the next block is drawn
    extreme = int(np.count_nonzero(np.abs(means - observed) >= abs(observed) - _TIE))
    low, high = np.percentile(means, [2.5, 97.5])
    return PairedResult(
        "paired bootstrap",
        observed,
        (extreme + 1) / (iterations + 1),
        observed,
        int(n),
        iterations=iterations,
        seed=seed,
        ci=(float(low), float(high)),
    )


# --------------------------------------------------------------------------- corrections


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values, controlling the family-wise error rate.

    With the m p-values sorted ascending, ``p_(1) <= ... <= p_(m)``:
    ``adj_(i) = min(1, max_{j <= i} (m - j + 1) p_(j))``; a hypothesis is rejected at
    level alpha when its adjusted p-value is at most alpha. NaN entries (tests that could
    not run) stay NaN and do not count in m.
    """
    p, out, mask = _pvalues(pvalues, "holm")
    q = p[mask]
    m = q.size
    if m:
        order = np.argsort(q, kind="stable")
        scaled = np.maximum.accumulate(q[order] * (m - np.arange(m)))
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(scaled, 1.0)
        out[mask] = adjusted
    return out


def benjamini_hochberg(pvalues: ArrayLike) -> np.ndarray:
    """Benjamini & Hochberg's (1995) adjusted p-values, controlling the false discovery
    rate (scipy's ``false_discovery_control(method="bh")``).

    With the m p-values sorted ascending: ``adj_(i) = min(1, min_{j >= i} m p_(j) / j)``.
    NaN entries stay NaN and do not count in m.
    """
    p, out, mask = _pvalues(pvalues, "benjamini_hochberg")
    q = p[mask]
    m = q.size
    if m:
        order = np.argsort(q, kind="stable")
        scaled = q[order] * m / np.arange(1, m + 1)
        scaled = np.minimum.accumulate(scaled[::-1])[::-1]
        adjusted = np.empty(m)
        adjusted[order] = np.minimum(scaled, 1.0)
        out[mask] = adjusted
    return out


def adjust(pvalues: ArrayLike, method: str) -> np.ndarray:
    """Adjusted p-values by ``method``, one of :data:`CORRECTIONS`."""
    if method == "holm":
        return holm(pvalues)
    if method == "benjamini-hochberg":
        return benjamini_hochberg(pvalues)
    raise ValueError(f"unknown correction {method!r}; expected one of {CORRECTIONS}")


# --------------------------------------------------------------------------- helpers


def _vector(values: ArrayLike, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D sequence of numbers, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{what}: non-finite value at position {_first_bad(arr)}")
    return arr


def _first_bad(arr: np.ndarray) -> int:
    return int(np.flatnonzero(~np.isfinite(arr))[0])


def _paired(a: ArrayLike, b: ArrayLike, what: str, *, minimum: int) -> tuple[np.ndarray, ...]:
    x, y = _vector(a, f"{what} (A)"), _vector(b, f"{what} (B)")
    if x.size != y.size:
        raise ValueError(
            f"{what}: {x.size} scores for A but {y.size} for B; expected one per example "
            "for both models, the same examples in the same order"
        )
    if x.size < minimum:
        raise ValueError(f"{what}: {x.size} examples; expected at least {minimum}")
    return x, y


def _counts(counts: ArrayLike, what: str) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.ndim not in (2, 3) or arr.shape[-1] != 3:
        raise ValueError(
            f"{what}: expected (correct, n_pred, n_gold) rows of shape (sentences, 3) or "
            f"(seeds, sentences, 3), got shape {arr.shape}"
        )
    rows = arr.reshape(-1, 3)
    if rows.shape[0] == 0:
        raise ValueError(f"{what}: no sentences")
    if not np.issubdtype(rows.dtype, np.integer) and not np.array_equal(rows, np.round(rows)):
        raise ValueError(f"{what}: counts must be whole numbers")
    rows = rows.astype(np.int64)
    if (rows < 0).any() or (rows[:, 0] > rows[:, 1]).any() or (rows[:, 0] > rows[:, 2]).any():
        raise ValueError(f"{what}: counts must satisfy 0 <= correct <= n_pred, n_gold")
    return rows


def _check_iterations(iterations: int) -> None:
    if isinstance(iterations, bool) or not isinstance(iterations, int | np.integer):
        raise ValueError(f"iterations: expected a positive integer, got {iterations!r}")
    if iterations < 1:
        raise ValueError(f"iterations: expected a positive integer, got {iterations}")


def _blocks(iterations: int, n: int, bytes_per_draw: int, budget_mb: float | None) -> list[int]:
    """Resamples per block: as many as have their ``n`` draws' working arrays
    (``bytes_per_draw`` each) within ``budget_mb``, at least one."""
    step = rows_per_block(bytes_per_draw * max(n, 1), budget_mb, at_most=iterations)
    return [min(step, iterations - start) for start in range(0, iterations, step)]


def _pvalues(pvalues: ArrayLike, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D sequence of p-values, got shape {p.shape}")
    mask = ~np.isnan(p)
    if ((p[mask] < 0) | (p[mask] > 1)).any():
        raise ValueError(f"{what}: p-values must lie in [0, 1]")
    return p, np.full(p.shape, np.nan), mask
