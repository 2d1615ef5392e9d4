"""BLI retrieval against a brute-force reference, MUSE conventions, coverage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xlalign.bli import evaluate_bli, random_baseline, read_dictionary
from xlalign.errors import InputError


def _brute(src, sv, tgt, tv, dic, k):
    sv = sv / np.linalg.norm(sv, axis=1, keepdims=True)
    tv = tv / np.linalg.norm(tv, axis=1, keepdims=True)
    hit = n = 0
    for s, golds in dic.items():
        if s not in src:
            continue
        g = [tgt.index(t) for t in golds if t in tgt]
        if not g:
            continue
        n += 1
        sims = tv @ sv[src.index(s)]
        ranked = sorted(range(len(tgt)), key=lambda j: -sims[j])[:k]
        hit += bool(set(ranked) & set(g))
    return hit / n, n


def test_matches_bruteforce_on_random_spaces() -> None:
    rng = np.random.default_rng(0)
    src = [f"s{i}" for i in range(300)]
    tgt = [f"t{i}" for i in range(250)]
    tv = rng.normal(size=(250, 16)).astype(np.float32)
    rot = np.linalg.qr(rng.normal(size=(16, 16)))[0]
    sv = rng.normal(size=(300, 16)).astype(np.float32)
    sv[:200] = (tv[:200] @ rot.T) + 0.8 * rng.normal(size=(200, 16))
    dic = {f"s{i}": [f"t{(i * 7) % 260}", f"t{i}"] for i in range(0, 320, 2)}
    res = evaluate_bli(src, sv @ rot, tgt, tv, dic, ks=(1, 5, 10), batch_size=17)
    for k in (1, 5, 10):
        p, n = _brute(src, sv @ rot, tgt, tv, dic, k)
        assert res.precision[k] == pytest.approx(p)
        assert res.evaluated == n
    assert res.total == len(dic) and 0 < res.coverage < 1
    assert res.precision[1] <= res.precision[5] <= res.precision[10]


def test_read_dictionary_muse_format(tmp_path: Path) -> None:
    p = tmp_path / "en-de.txt"
    p.write_text("house haus\nhouse gebäude\nhouse haus\ncat katze\n\n", encoding="utf-8")
    assert read_dictionary(p) == {"house": ["haus", "gebäude"], "cat": ["katze"]}
    p.write_text("a b c\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1"):
        read_dictionary(p)


def test_errors_and_random_baseline() -> None:
    v = np.eye(3, dtype=np.float32)
    with pytest.raises(InputError, match="different dimension"):
        evaluate_bli(["a"], v[:1], ["b"], np.ones((1, 4), np.float32), {"a": ["b"]})
    with pytest.raises(InputError, match="no dictionary pair"):
        evaluate_bli(["a"], v[:1], ["b"], v[:1], {"x": ["y"]})
    assert random_baseline(1000)["p@1"] == pytest.approx(0.001)
