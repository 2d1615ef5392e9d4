"""Dictionary induction from aligned spaces: true pairs recovered, brute-force agreement."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.evaluation.bli import read_dictionary
from xlalign.mapping.induction import InducedPair, induce_dictionary, induction_stats, write_induced


def _aligned(n: int = 400, dim: int = 24, noise: float = 0.05, seed: int = 0):
    """Source space; target = source @ rotation + noise, rows shuffled (target word = "T"+i).

    Returns the spaces and the true pairs (source word -> target word).
    """
    rng = np.random.default_rng(seed)
    sv = rng.normal(size=(n, dim)).astype(np.float32)
    rot = np.linalg.qr(rng.normal(size=(dim, dim)))[0]
    perm = rng.permutation(n)  # target row r holds the translation of source row perm[r]
    tv = (sv[perm] @ rot + noise * rng.normal(size=(n, dim))).astype(np.float32)
    src = [f"s{i}" for i in range(n)]
    tgt = [f"T{i}" for i in perm]
    return src, sv @ rot, tgt, tv, {f"s{i}": f"T{i}" for i in range(n)}


def test_mutual_csls_recovers_the_true_pairs() -> None:
    src, sv, tgt, tv, truth = _aligned()
    pairs = induce_dictionary(src, sv, tgt, tv, batch_size=64)
    assert len(pairs) >= 0.99 * len(truth)
    assert all(truth[p.src] == p.tgt for p in pairs)
    assert all(src[p.src_rank - 1] == p.src and tgt[p.tgt_rank - 1] == p.tgt for p in pairs)
    scores = [p.score for p in pairs]
    assert scores == sorted(scores, reverse=True)
    again = induce_dictionary(src, sv, tgt, tv)  # other blocks: same pairs, same order
    assert [(p.src, p.tgt) for p in again] == [(p.src, p.tgt) for p in pairs]
    assert [p.score for p in again] == pytest.approx(scores, abs=1e-6)
    assert again == induce_dictionary(src, sv, tgt, tv)  # deterministic


def _reference(sv, tv, *, retrieval: str, k: int, mode: str):
    """Brute-force induction in float64 with plain loops: {(src row, tgt row): score}."""
    sv = sv.astype(np.float64) / np.linalg.norm(sv, axis=1, keepdims=True)
    tv = tv.astype(np.float64) / np.linalg.norm(tv, axis=1, keepdims=True)
    ns, nt = len(sv), len(tv)
    cos = [[float(np.dot(sv[i], tv[j])) for j in range(nt)] for i in range(ns)]
    score = cos
    if retrieval == "csls":
        r_t = [np.mean(sorted(cos[i])[-k:]) for i in range(ns)]
        r_s = [np.mean(sorted(cos[i][j] for i in range(ns))[-k:]) for j in range(nt)]
        score = [[2 * cos[i][j] - r_t[i] - r_s[j] for j in range(nt)] for i in range(ns)]
    gaps = []
    fwd = {}
    for i in range(ns):
        row = sorted(range(nt), key=lambda j: -score[i][j])
        fwd[i] = row[0]
        gaps.append(score[i][row[0]] - score[i][row[1]])
    bwd = {}
    for j in range(nt):
        col = sorted(range(ns), key=lambda i: -score[i][j])
        bwd[j] = col[0]
        gaps.append(score[col[0]][j] - score[col[1]][j])
    s2t = {(i, j) for i, j in fwd.items()}
    t2s = {(i, j) for j, i in bwd.items()}
    chosen = {"forward": s2t, "mutual": s2t & t2s, "union": s2t | t2s}[mode]
    return {(i, j): score[i][j] for i, j in chosen}, min(gaps)


@pytest.mark.parametrize("retrieval", ["nn", "csls"])
@pytest.mark.parametrize("mode", ["mutual", "forward", "union"])
def test_agrees_exactly_with_bruteforce(retrieval: str, mode: str) -> None:
    rng = np.random.default_rng(1)
    sv = rng.normal(size=(60, 10)).astype(np.float32)
    tv = rng.normal(size=(47, 10)).astype(np.float32)
    src, tgt = [f"s{i}" for i in range(60)], [f"t{j}" for j in range(47)]
    ref, gap = _reference(sv, tv, retrieval=retrieval, k=3, mode=mode)
    assert gap > 1e-5  # no near-ties: float32 and float64 pick the same neighbours
    assert 5 < len(ref) < 107
    for batch_size in (1, 8, 13, None):
        pairs = induce_dictionary(
            src, sv, tgt, tv, retrieval=retrieval, csls_k=3, mode=mode, max_rank=None,
            batch_size=batch_size,
        )  # fmt: skip
        got = {(p.src_rank - 1, p.tgt_rank - 1): p.score for p in pairs}
        assert set(got) == set(ref)
        for key, value in ref.items():
            assert got[key] == pytest.approx(value, abs=1e-6)
        assert [(p.src, p.tgt) for p in pairs] == [
            (src[i], tgt[j]) for i, j in sorted(ref, key=lambda ij: (-ref[ij], *ij))
        ]


def test_max_rank_restricts_both_sides() -> None:
    src, sv, tgt, tv, truth = _aligned()
    source_of = {t: s for s, t in truth.items()}
    pairs = induce_dictionary(src, sv, tgt, tv, max_rank=150)
    assert pairs and max(max(p.src_rank, p.tgt_rank) for p in pairs) <= 150
    # Words whose translation is also among the 150 most frequent get it ...
    both = {s for s, t in truth.items() if src.index(s) < 150 and tgt.index(t) < 150}
    assert 20 < len(both) < 150
    assert sum(p.src in both for p in pairs) >= 0.95 * len(both)
    for p in pairs:
        if p.src in both:
            assert p.tgt == truth[p.src]
        else:  # ... the others can only pair up with words whose translation is cut off too
            assert src.index(source_of[p.tgt]) >= 150 and tgt.index(truth[p.src]) >= 150
    # Restricting the vocabularies is not filtering a full-vocabulary result by rank (MUSE):
    # that keeps the true pairs only, while restricted retrieval also pairs up the others.
    full = induce_dictionary(src, sv, tgt, tv, max_rank=None)
    assert len(full) == len(truth) and all(truth[p.src] == p.tgt for p in full)
    kept = [p for p in full if max(p.src_rank, p.tgt_rank) <= 150]
    assert {p.src for p in kept} == both and len(pairs) > len(kept)


def test_filters_identical_min_score_max_pairs() -> None:
    src, sv, tgt, tv, _ = _aligned(n=120)
    tgt = [t if i % 10 else src[int(t[1:])] for i, t in enumerate(tgt)]  # some shared strings
    pairs = induce_dictionary(src, sv, tgt, tv)
    identical = [p for p in pairs if p.src == p.tgt]
    assert len(identical) == 12
    kept = induce_dictionary(src, sv, tgt, tv, exclude_identical=True)
    assert kept == [p for p in pairs if p.src != p.tgt]
    cut = pairs[30].score
    assert induce_dictionary(src, sv, tgt, tv, min_score=cut) == pairs[:31]
    assert induce_dictionary(src, sv, tgt, tv, max_pairs=5) == pairs[:5]
    stats = induction_stats(pairs)
    assert stats["pairs"] == len(pairs) == stats["src_words"] == stats["tgt_words"]
    assert stats["identical"] == 12 and stats["score_max"] == pairs[0].score
    assert stats["score_min"] == pairs[-1].score <= stats["score_median"]
    assert induction_stats([])["pairs"] == 0


def test_empty_result_says_why() -> None:
    words = ["a", "b", "c"]
    v = np.eye(3, dtype=np.float32)
    with pytest.raises(InputError, match=r"3 mutual csls .*; 3 removed as identical words"):
        induce_dictionary(words, v, words, v, exclude_identical=True)
    with pytest.raises(InputError, match=r"3 forward nn .*; 3 scored below min_score=1.5"):
        induce_dictionary(words, v, words, v, retrieval="nn", mode="forward", min_score=1.5)
    with pytest.raises(InputError, match="different dimension"):
        induce_dictionary(words, v, words, v[:, :2])
    with pytest.raises(ConfigError, match="mode"):
        induce_dictionary(words, v, words, v, mode="both")
    with pytest.raises(ConfigError, match="max_rank"):
        induce_dictionary(words, v, words, v, max_rank=0)


def test_write_induced_muse_format(tmp_path: Path) -> None:
    pairs = [InducedPair("haus", "house", 0.9, 3, 1), InducedPair("katze", "cat", 0.5, 1, 2)]
    path = tmp_path / "out" / "de-en.txt"
    write_induced(pairs, path)
    assert path.read_text(encoding="utf-8") == "haus house\nkatze cat\n"
    assert read_dictionary(path) == {"haus": ["house"], "katze": ["cat"]}
