"""Related / unrelated word pairs, L2 distances and their summary, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from xlalign.analysis.distances import (
    l2_distances,
    prob_related_closer,
    sample_word_pairs,
    summarise,
)
from xlalign.core.errors import ConfigError, InputError

LINKS = [{(0, 0), (1, 2)}, {(0, 1)}, set(), {(2, 0), (1, 1)}]


def test_sample_word_pairs() -> None:
    pairs = sample_word_pairs(LINKS, n_related=10, n_unrelated=6, seed=3)
    # every link, once, as a same-sentence pair
    assert sorted(pairs.related) == sorted(
        (k, i, k, j) for k, ls in enumerate(LINKS) for i, j in ls
    )
    assert len(pairs.unrelated) == 6 == len(set(pairs.unrelated))
    src_words = {(k, i) for k, ls in enumerate(LINKS) for i, _ in ls}
    tgt_words = {(k, j) for k, ls in enumerate(LINKS) for _, j in ls}
    for ks, i, kt, j in pairs.unrelated:
        assert ks != kt and (ks, i) in src_words and (kt, j) in tgt_words
    # seeded: same draw again, another seed draws differently
    assert sample_word_pairs(LINKS, 10, 6, seed=3) == pairs
    small = sample_word_pairs(LINKS, n_related=2, n_unrelated=0, seed=0)
    assert len(small.related) == 2 and not small.unrelated
    assert len({tuple(sample_word_pairs(LINKS, 2, 2, seed=s).related) for s in range(10)}) > 1
    # one sentence with links: no unrelated pair can exist
    assert sample_word_pairs([{(0, 0), (1, 1)}], 5, 5).unrelated == []
    with pytest.raises(ConfigError):
        sample_word_pairs(LINKS, -1, 0)


def test_l2_distances_by_hand() -> None:
    # states[k]: [layers=2, words, dim=2]
    src = [np.array([[[0, 0], [1, 1]], [[3, 4], [0, 0]]], dtype=np.float32)]
    tgt = [
        np.array([[[0, 0]], [[0, 0]]], dtype=np.float32),
        np.array([[[1, 0]], [[np.nan, 0]]], dtype=np.float32),
    ]
    pairs = [(0, 0, 0, 0), (0, 1, 1, 0)]
    np.testing.assert_allclose(l2_distances(src, tgt, pairs, 0), [0.0, 1.0])
    d = l2_distances(src, tgt, pairs, -1)
    assert d[0] == pytest.approx(5.0) and np.isnan(d[1])
    with pytest.raises(InputError, match="outside"):
        l2_distances(src, tgt, [(0, 5, 0, 0)], 0)


def test_prob_related_closer_by_hand() -> None:
    # related 1 is closer than 2, 3, 4 (3 wins); 3 beats 4 and ties 3 (1.5); 5 none:
    # (3 + 1.5) / 9 = 0.5
    assert prob_related_closer([1, 3, 5], [2, 3, 4]) == pytest.approx(0.5)
    assert prob_related_closer([1, 2], [3, 4]) == 1.0
    assert prob_related_closer([], [1]) is None


def test_summarise_by_hand() -> None:
    out = summarise([1.0, 2.0, 3.0, np.nan], [2.5, 4.5, 10.0], bins=[0, 2, 4, 6])
    rel, unrel = out["related"], out["unrelated"]
    assert rel["n"] == 3 and rel["mean"] == pytest.approx(2.0)
    assert rel["std"] == pytest.approx(np.sqrt(2 / 3)) and rel["median"] == 2.0
    # bins [0,2) [2,4) [4,6]: 1 | 2, 3 | -
    assert rel["histogram"] == [1, 2, 0] and rel["above"] == 0
    assert unrel["histogram"] == [0, 1, 1] and unrel["above"] == 1
    assert out["mean_difference"] == pytest.approx(17 / 3 - 2)
    # related 1, 2 < all; 3 < 4.5, 10 but > 2.5: (3 + 3 + 2) / 9
    assert out["auc_related_closer"] == pytest.approx(8 / 9)
    assert out["dropped_non_finite"] == 1 and out["bins"] == [0, 2, 4, 6]
    empty = summarise([], [1.0])
    assert empty["related"]["mean"] is None and empty["auc_related_closer"] is None
    assert len(empty["bins"]) == 51
    with pytest.raises(ConfigError):
        summarise([1.0], [2.0], bins=[1, 0])
