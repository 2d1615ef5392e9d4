"""Word alignment from similarities (SimAlign's Argmax, XLM-Align's optimal transport)
on hand-worked matrices, and AER by layer."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from xlalign.analysis.repr_align import (
    aer_by_layer,
    align_corpus,
    align_pair,
    argmax_align,
    ot_align,
    similarity,
    sinkhorn_scaling,
)
from xlalign.core.errors import ConfigError

#: Source word 0 is the most similar to both target words.
S = np.array([[9.0, 8.0], [5.0, 1.0]])


def test_similarity_is_cosine() -> None:
    sim = similarity(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[3.0, 4.0], [0.0, 2.0]]))
    np.testing.assert_allclose(sim, [[0.6, 0.0], [0.0, 0.0]])


def test_argmax_is_the_intersection() -> None:
    # rows: 0 -> 0, 1 -> 0; columns: 0 -> 0, 1 -> 0: only (0, 0) agrees
    assert argmax_align(S) == {(0, 0)}
    sim = np.array([[0.9, 0.1, 0.2], [0.2, 0.3, 0.8], [0.1, 0.7, 0.6]])
    assert argmax_align(sim) == {(0, 0), (1, 2), (2, 1)}
    assert argmax_align(np.zeros((0, 3))) == set()


def test_sinkhorn_by_hand() -> None:
    # round 1: columns / (14, 9): [[9/14, 8/9], [5/14, 1/9]]
    #          rows / (193/126, 59/126): [[81/193, 112/193], [45/59, 14/59]]
    # round 2: columns / (81/193 + 45/59, 112/193 + 14/59)
    pi1 = [[F(81, 193), F(112, 193)], [F(45, 59), F(14, 59)]]
    c0, c1 = pi1[0][0] + pi1[1][0], pi1[0][1] + pi1[1][1]
    xi2 = [[pi1[0][0] / c0, pi1[0][1] / c1], [pi1[1][0] / c0, pi1[1][1] / c1]]
    pi2 = [[x / sum(row) for x in row] for row in xi2]
    pi, xi = sinkhorn_scaling(S, iterations=2)
    np.testing.assert_allclose(xi, np.array(xi2, dtype=float), rtol=1e-12)
    np.testing.assert_allclose(pi, np.array(pi2, dtype=float), rtol=1e-12)
    pi, xi = sinkhorn_scaling(S, iterations=1)
    np.testing.assert_allclose(pi, np.array(pi1, dtype=float), rtol=1e-12)
    np.testing.assert_allclose(xi, [[9 / 14, 8 / 9], [5 / 14, 1 / 9]], rtol=1e-12)
    pi, xi = sinkhorn_scaling(S, iterations=0)
    np.testing.assert_allclose(pi, S)


def test_ot_links_by_hand() -> None:
    # 2 rounds: xi2 = [[.355, .710], [.645, .290]]: rows 0 -> 1, 1 -> 0; columns 0 -> 1,
    # 1 -> 0: the transport spreads word 0's mass, {(0, 1), (1, 0)}
    assert ot_align(S) == {(0, 1), (1, 0)}
    # 1 round: rows of pi1 0 -> 1, 1 -> 0; columns of xi1 (9/14 > 5/14, 8/9 > 1/9) -> 0
    assert ot_align(S, iterations=1) == {(0, 1)}
    # 0 rounds: Argmax
    assert ot_align(S, iterations=0) == argmax_align(S)
    with pytest.raises(ConfigError):
        ot_align(S, iterations=-1)


def test_ot_nonpositive_entries_are_floored_and_scale_free() -> None:
    sim = np.array([[0.9, -0.2, 0.1], [0.0, 0.8, 0.3]])
    pi, _ = sinkhorn_scaling(sim)
    assert np.all(np.isfinite(pi)) and np.all(pi > 0)
    assert ot_align(sim) == {(0, 0), (1, 1)}
    # row and column scalings of a positive matrix (dot products vs cosines) give the
    # same links after two rounds
    rng = np.random.default_rng(0)
    pos = rng.uniform(0.1, 1.0, size=(5, 7))
    scaled = rng.uniform(0.5, 20, size=(5, 1)) * pos * rng.uniform(0.5, 20, size=(1, 7))
    assert ot_align(scaled) == ot_align(pos)
    # large scales are stable in the log domain
    assert ot_align(pos * 1e300) == ot_align(pos)


def test_align_pair_skips_words_without_vectors() -> None:
    src = np.array([[1.0, 0.0], [np.nan, np.nan], [0.0, 1.0]])
    tgt = np.array([[0.0, 1.0], [1.0, 0.1]])
    assert align_pair(src, tgt, "argmax") == {(0, 1), (2, 0)}
    assert align_pair(src, tgt, "ot") == {(0, 1), (2, 0)}
    assert align_pair(src[:0], tgt, "ot") == set()
    with pytest.raises(ConfigError, match="method"):
        align_pair(src, tgt, "itermax")


def test_aer_by_layer_by_hand() -> None:
    # one sentence pair, 2 layers; layer 0 aligns crosswise, layer 1 straight
    s = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])
    t = np.array([[[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.1], [0.1, 1.0]]])
    gold = {0: ({(0, 0)}, {(0, 0), (1, 1)})}  # sure 0-0, possible 1-1
    assert align_corpus([s], [t], 0, "argmax") == [{(0, 1), (1, 0)}]
    res = aer_by_layer([s], [t], gold, methods=("argmax", "ot"))
    for m in ("argmax", "ot"):
        r0, r1 = res[m]
        # layer 0: A = {0-1, 1-0}: no hit; AER = 1 - 0 / (2 + 1) = 1
        assert r0.aer == pytest.approx(1.0)
        # layer 1: A = {0-0, 1-1}: |A∩S| = 1, |A∩P| = 2: AER = 1 - 3 / 3 = 0
        assert r1.aer == pytest.approx(0.0) and r1.precision == 1.0 and r1.recall == 1.0
