"""eflomal's reference links for test pairs aligned with a training sample (real eflomal
on a tiny synthetic corpus)."""

from __future__ import annotations

import random

import pytest

from xlalign.analysis.reference import eflomal_reference, eflomal_word
from xlalign.core.errors import InputError
from xlalign.wordalign.aer import score

pytest.importorskip("eflomal")


def synthetic(n: int, seed: int) -> tuple[list[list[str]], list[list[str]], list[set]]:
    """Source words s0..s29, target tK for sK, with adjacent swaps; the true links."""
    rng = random.Random(seed)
    src_out, tgt_out, gold = [], [], []
    for _ in range(n):
        src = [f"s{rng.randrange(30)}" for _ in range(rng.randint(3, 7))]
        order = list(range(len(src)))
        if len(src) > 3 and rng.random() < 0.5:
            order[1], order[2] = order[2], order[1]
        src_out.append(src)
        tgt_out.append(["t" + src[p][1:] for p in order])
        gold.append({(p, q) for q, p in enumerate(order)})
    return src_out, tgt_out, gold


def test_eflomal_reference_aligns_the_test_pairs(tmp_path) -> None:
    train_src, train_tgt, _ = synthetic(300, 0)
    test_src, test_tgt, truth = synthetic(12, 1)
    links = eflomal_reference(test_src, test_tgt, train_src, train_tgt, seed=0, tmpdir=tmp_path)
    assert len(links) == 12
    for k, ls in enumerate(links):
        assert all(i < len(test_src[k]) and j < len(test_tgt[k]) for i, j in ls)
    res = score(links, {k: (g, g) for k, g in enumerate(truth)})
    assert res.aer < 0.15, res
    # seeded: the same links again
    assert eflomal_reference(test_src, test_tgt, train_src, train_tgt, seed=0) == links


def test_eflomal_reference_errors() -> None:
    with pytest.raises(InputError, match="test"):
        eflomal_reference([["a"]], [], [], [])
    with pytest.raises(InputError, match="empty"):
        eflomal_reference([["a"]], [[]])
    with pytest.raises(InputError, match="empty token"):
        eflomal_reference([["a", ""]], [["c"]])


def test_eflomal_word_keeps_a_full_width_space_a_word_of_its_own() -> None:
    # KFTT ja-en writes U+3000 as a word: eflomal (which splits on whitespace) gets a
    # visible stand-in, so the later words keep their positions
    assert eflomal_word("\u3000") == "<U+3000>"
    assert eflomal_word("a\tb") == "a<U+0009>b"
    assert eflomal_word("word") == "word"
