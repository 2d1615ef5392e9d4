"""Spearman's rho against a hand-computed rank correlation; undefined cases."""

from __future__ import annotations

import pytest

from xlalign.analysis.correlation import spearman
from xlalign.core.errors import InputError


def test_spearman_by_hand() -> None:
    # ranks x: 1 2 3 4 5, ranks y: 2 1 4 3 5; d^2 = 1+1+1+1+0 = 4
    # rho = 1 - 6 * 4 / (5 * 24) = 0.8
    out = spearman([10, 20, 30, 40, 50], [0.2, 0.1, 0.9, 0.5, 1.0])
    assert out["rho"] == pytest.approx(0.8)
    assert out["n"] == 5 and out["reason"] is None
    # two-sided p of rho = 0.8, n = 5: t = 0.8 sqrt(3 / 0.36) = 2.3094, df 3 -> p = 0.1041
    assert out["p_value"] == pytest.approx(0.1041, abs=1e-3)
    neg = spearman([1, 2, 3, 4], [4, 3, 2, 1])
    assert neg["rho"] == pytest.approx(-1.0)


def test_spearman_ties_use_mean_ranks() -> None:
    # x ranks 1.5 1.5 3 4; y ranks 1 2 3 4: Pearson of the ranks
    # mean 2.5; dx = -1 -1 .5 1.5, dy = -1.5 -.5 .5 1.5; cov = 1.5+.5+.25+2.25 = 4.5
    # var x = 1+1+.25+2.25 = 4.5, var y = 5 -> rho = 4.5 / sqrt(22.5) = 0.9487
    assert spearman([1, 1, 2, 3], [1, 2, 3, 4])["rho"] == pytest.approx(0.948683, abs=1e-6)


def test_spearman_undefined() -> None:
    few = spearman([1, 2], [3, 4])
    assert few["rho"] is None and few["p_value"] is None and "3" in few["reason"]
    const = spearman([1, 1, 1, 1], [1, 2, 3, 4])
    assert const["rho"] is None and "constant" in const["reason"]
    # None / NaN pairs are dropped
    out = spearman([1, 2, None, 3, float("nan")], [1, 2, 5, 3, 1])
    assert out["n"] == 3 and out["rho"] == pytest.approx(1.0)
    with pytest.raises(InputError):
        spearman([1, 2, 3], [1, 2])
