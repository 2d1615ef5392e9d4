"""The hand-made English-German gold set: complete, consistent, readable."""

from __future__ import annotations

from xlalign.analysis.gold import load_handmade_gold


def test_handmade_gold() -> None:
    src, tgt, gold = load_handmade_gold()
    assert len(src) == len(tgt) == len(gold) == 40
    for k in range(40):
        sure, possible = gold[k]
        assert sure and sure <= possible
        words = [w for w in src[k] if w.isalpha()]
        assert 5 <= len(words) <= 15
        # every English word except commas is linked
        linked = {i for i, _ in possible}
        assert {i for i, w in enumerate(src[k]) if w != ","} <= linked
    # spot checks of the annotation: verb-final clause, separable verb, do-support
    assert src[3][4] == "works" and tgt[3][7] == "arbeitet" and (4, 7) in gold[3][0]
    assert tgt[4][2] == "fährt" and tgt[4][6] == "ab" and {(2, 2), (2, 6)} <= gold[4][0]
    assert src[6][0] == "Do" and (0, 0) in gold[6][1] - gold[6][0]
