"""Spearman's rank correlation with its two-sided p-value, as 001 reports it (alignment
against transfer: "rho_s = 0.73, p (2-tailed) < .01").

Spearman's rho is Pearson's correlation of the ranks (ties get their mean rank); the
p-value is scipy's two-sided test (a t distribution with n - 2 degrees of freedom). Where
it is undefined (fewer than 3 pairs, or a constant input) rho and p are None with a reason,
never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from xlalign.core.errors import InputError


def spearman(x: Sequence[float | None], y: Sequence[float | None]) -> dict[str, Any]:
    """``{"rho", "p_value", "n", "reason"}`` of paired values ``x``, ``y``.

    Pairs where either value is None or not finite are left out (``n`` counts the rest);
    ``reason`` is None when rho is defined.
    """
    from scipy.stats import spearmanr

    if len(x) != len(y):
        raise InputError(f"spearman: {len(x)} x values but {len(y)} y values")
    kept = [
        (float(a), float(b))
        for a, b in zip(x, y, strict=True)
        if a is not None and b is not None and math.isfinite(a) and math.isfinite(b)
    ]
    n = len(kept)
    out: dict[str, Any] = {"rho": None, "p_value": None, "n": n, "reason": None}
    if n < 3:
        out["reason"] = f"{n} pair(s): at least 3 are needed"
        return out
    xs = np.array([a for a, _ in kept])
    ys = np.array([b for _, b in kept])
    if np.all(xs == xs[0]) or np.all(ys == ys[0]):
        out["reason"] = "constant input: the rank correlation is undefined"
        return out
    res = spearmanr(xs, ys, alternative="two-sided")
    out["rho"] = float(res.statistic)
    out["p_value"] = float(res.pvalue)
    return out
