"""BLI retrieval against a brute-force reference, MUSE conventions, coverage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import read_json
from xlalign.evaluation.bli import (
    bli_record,
    csls_penalties,
    evaluate_bli,
    random_baseline,
    read_dictionary,
    unit_rows,
)
from xlalign.reporting.examples import bli_query_hits
from xlalign.static.vectors import write_vec


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


# --------------------------------------------------------------------------- reference


def _reference(src, sv, tgt, tv, dic, *, retrieval, csls_k, ks, oov):
    """Brute-force P@k, MRR and ranks in float64 with plain loops (independent of the module).

    The rank of a query is the position of its first gold translation in the fully sorted
    target list; P@k asks whether any gold is among the first k.
    """
    sv = sv.astype(np.float64) / np.linalg.norm(sv, axis=1, keepdims=True)
    tv = tv.astype(np.float64) / np.linalg.norm(tv, axis=1, keepdims=True)
    cos = [[float(np.dot(s, t)) for t in tv] for s in sv]
    r_t = [np.mean(sorted(row)[-csls_k:]) for row in cos]
    r_s = [np.mean(sorted(cos[i][j] for i in range(len(src)))[-csls_k:]) for j in range(len(tgt))]
    hits = dict.fromkeys(ks, 0)
    ranks, gaps = {}, []
    for s, golds in dic.items():
        if s not in src:
            continue
        g = {tgt.index(t) for t in golds if t in tgt}
        if not g:
            continue
        i = src.index(s)
        if retrieval == "csls":
            scores = [2 * cos[i][j] - r_t[i] - r_s[j] for j in range(len(tgt))]
        else:
            scores = cos[i]
        order = sorted(range(len(tgt)), key=lambda j: -scores[j])
        for k in ks:
            hits[k] += bool(g & set(order[:k]))
        ranks[s] = next(pos for pos, j in enumerate(order, start=1) if j in g)
        best = max(scores[j] for j in g)
        gaps.append(min(abs(scores[j] - best) for j in range(len(tgt)) if j not in g))
    n = len(dic) if oov == "miss" else len(ranks)
    return {k: hits[k] / n for k in ks}, sum(1 / r for r in ranks.values()) / n, ranks, min(gaps)


def _random_case(seed: int = 0):
    rng = np.random.default_rng(seed)
    src = [f"s{i}" for i in range(45)]
    tgt = [f"t{i}" for i in range(38)]
    sv = rng.normal(size=(45, 12)).astype(np.float32)
    tv = rng.normal(size=(38, 12)).astype(np.float32)
    dic = {}
    for i in range(0, 52, 2):  # s46.. are source OOV
        golds = [f"t{(3 * i + d) % 44}" for d in range(1 + i % 3)]  # t38.. are target OOV
        dic[f"s{i}"] = golds
    return src, sv, tgt, tv, dic


@pytest.mark.parametrize("retrieval", ["nn", "csls"])
@pytest.mark.parametrize("oov", ["skip", "miss"])
def test_agrees_exactly_with_bruteforce(retrieval: str, oov: str) -> None:
    src, sv, tgt, tv, dic = _random_case()
    ks = (1, 2, 5, 10)
    p_ref, mrr_ref, ranks_ref, gap = _reference(
        src, sv, tgt, tv, dic, retrieval=retrieval, csls_k=4, ks=ks, oov=oov
    )
    assert gap > 1e-5  # no near-ties: float32 and float64 must rank alike
    assert 0 < p_ref[1] < p_ref[10] < 1
    for batch_size in (1, 4, 7, 38, 64, None):
        res = evaluate_bli(
            src, sv, tgt, tv, dic, retrieval=retrieval, csls_k=4, ks=ks, oov=oov,
            batch_size=batch_size,
        )  # fmt: skip
        assert res.ranks == ranks_ref
        assert res.precision == p_ref  # same hits: the fractions are equal
        assert res.mrr == pytest.approx(mrr_ref, abs=1e-6)
        assert res.denominator == (len(dic) if oov == "miss" else len(ranks_ref))


def test_coverage_counts() -> None:
    src, sv, tgt, tv, dic = _random_case()
    res = evaluate_bli(src, sv, tgt, tv, dic, oov="miss")
    in_src = [s for s in dic if s in src]
    gold_oov = [s for s in in_src if not any(t in tgt for t in dic[s])]
    assert res.total == len(dic) == 26
    assert res.skipped_src_oov == len(dic) - len(in_src) == 3
    assert res.skipped_gold_oov == len(gold_oov) > 0
    assert res.evaluated == len(in_src) - len(gold_oov) == len(res.ranks)
    assert res.pairs_total == sum(len(g) for g in dic.values())
    assert res.pairs_in_vocab == sum(t in tgt for s in in_src for t in dic[s])
    d = res.as_dict()
    assert set(d) == {
        "p@1", "p@5", "p@10", "mrr", "retrieval", "csls_k", "oov", "evaluated", "total",
        "denominator", "coverage", "pairs_total", "pairs_in_vocab", "pair_coverage",
        "skipped_src_oov", "skipped_gold_oov",
    }  # fmt: skip
    assert d["coverage"] == res.evaluated / 26 and d["csls_k"] is None and d["oov"] == "miss"
    assert d["pair_coverage"] == res.pairs_in_vocab / res.pairs_total
    assert evaluate_bli(src, sv, tgt, tv, dic, retrieval="csls").as_dict()["csls_k"] == 10


# A hub: target "hub" is the nearest neighbour (cosine) of all three source words; CSLS
# (k = 2) discounts it and retrieves the right translation of b and c. Unit vectors in 2-D
# (3-4-5 and 7-24-25 triangles), so every cosine is exact:
#
#                 hub (.8,.6)   bt (0,-1)   ct (0,1)   r_T = mean of top 2
#   a (1, 0)         .80           0           0        (.80 + 0) / 2   = .40
#   b (.96,-.28)     .60          .28        -.28       (.60 + .28) / 2 = .44
#   c (.6, .8)       .96         -.80         .80       (.96 + .80) / 2 = .88
#   r_S = top 2     (.96+.80)/2   (.28+0)/2   (.80+0)/2
#                    = .88         = .14       = .40
#
# CSLS = 2 cos - r_T - r_S:
#   a: 1.6-.4-.88 = .32    -.4-.14 = -.54       -.4-.4 = -.80       -> hub
#   b: 1.2-.44-.88 = -.12  .56-.44-.14 = -.02   -.56-.44-.4 = -1.40 -> bt
#   c: 1.92-.88-.88 = .16  -1.6-.88-.14 = -2.62 1.6-.88-.4 = .32    -> ct
HUB_SRC = (["a", "b", "c"], np.array([[1, 0], [0.96, -0.28], [0.6, 0.8]], np.float32))
HUB_TGT = (["hub", "bt", "ct"], np.array([[0.8, 0.6], [0, -1], [0, 1]], np.float32))
HUB_DIC = {"a": ["hub"], "b": ["bt"], "c": ["ct"]}


def test_csls_discounts_a_hub() -> None:
    nn = evaluate_bli(*HUB_SRC, *HUB_TGT, HUB_DIC, ks=(1, 2))
    assert nn.ranks == {"a": 1, "b": 2, "c": 2}  # b: .28 < .60, c: .80 < .96
    assert nn.precision == {1: 1 / 3, 2: 1.0}
    assert nn.mrr == pytest.approx((1 + 1 / 2 + 1 / 2) / 3)
    csls = evaluate_bli(*HUB_SRC, *HUB_TGT, HUB_DIC, retrieval="csls", csls_k=2, ks=(1, 2))
    assert csls.ranks == {"a": 1, "b": 1, "c": 1}
    assert csls.precision == {1: 1.0, 2: 1.0} and csls.mrr == 1.0


def test_csls_penalties_by_hand() -> None:
    src = unit_rows(HUB_SRC[1], torch.device("cpu"))
    tgt = unit_rows(HUB_TGT[1], torch.device("cpu"))
    r_t, r_s = csls_penalties(src, tgt, 2, batch_size=2)
    np.testing.assert_allclose(r_t.numpy(), [0.40, 0.44, 0.88], atol=1e-6)
    np.testing.assert_allclose(r_s.numpy(), [0.88, 0.14, 0.40], atol=1e-6)
    r_t, _ = csls_penalties(src, tgt, 2, src_rows=torch.tensor([2, 0]))
    np.testing.assert_allclose(r_t.numpy(), [0.88, 0.40], atol=1e-6)


def test_mrr_by_hand() -> None:
    # Targets t_i = (1, i): the cosine to x = (1, 0) falls with i, to y = (0, 1) rises.
    tgt = [f"t{i}" for i in range(5)]
    tv = np.array([[1, i] for i in range(5)], np.float32)
    src, sv = ["x", "y", "w"], np.array([[1, 0], [0, 1], [1, 1]], np.float32)
    dic = {
        "x": ["t2"],  # rank 3
        "y": ["t0", "t3"],  # t3 is the best gold: rank 2 (behind t4)
        "z": ["t1"],  # source OOV
        "w": ["gone"],  # gold OOV
    }
    skip = evaluate_bli(src, sv, tgt, tv, dic, ks=(1, 2, 3))
    assert skip.ranks == {"x": 3, "y": 2}
    assert skip.mrr == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert skip.precision == {1: 0.0, 2: 0.5, 3: 1.0}
    assert (skip.skipped_src_oov, skip.skipped_gold_oov, skip.pairs_in_vocab) == (1, 1, 3)
    miss = evaluate_bli(src, sv, tgt, tv, dic, ks=(1, 2, 3), oov="miss")
    assert miss.mrr == pytest.approx((1 / 3 + 1 / 2) / 4)
    assert miss.precision == {1: 0.0, 2: 0.25, 3: 0.5}
    assert miss.coverage == skip.coverage == 0.5


def test_input_errors_name_counts() -> None:
    v = np.eye(3, dtype=np.float32)
    with pytest.raises(InputError, match="empty dictionary"):
        evaluate_bli(["a"], v[:1], ["b"], v[:1], {})
    with pytest.raises(InputError) as err:
        evaluate_bli(["a", "b"], v[:2], ["x"], v[:1], {"a": ["y", "z"], "q": ["x"], "b": ["y"]})
    msg = str(err.value)
    assert "4 pairs read for 3 source words" in msg
    assert "1 source words are not in the source vocabulary" in msg
    assert "2 target words are not in the target vocabulary" in msg
    with pytest.raises(InputError, match="source space: non-finite"):
        evaluate_bli(["a"], np.array([[np.nan, 1, 0]]), ["b"], v[:1], {"a": ["b"]})
    with pytest.raises(InputError, match="target space: expected a \\(2, dim\\) matrix"):
        evaluate_bli(["a"], v[:1], ["b", "c"], v[:1], {"a": ["b"]})
    with pytest.raises(InputError, match="source space: duplicate word 'a'"):
        evaluate_bli(["a", "a"], v[:2], ["b"], v[:1], {"a": ["b"]})
    with pytest.raises(ConfigError, match="retrieval"):
        evaluate_bli(["a"], v[:1], ["b"], v[:1], {"a": ["b"]}, retrieval="cosine")
    with pytest.raises(ConfigError, match="oov"):
        evaluate_bli(["a"], v[:1], ["b"], v[:1], {"a": ["b"]}, oov="drop")
    with pytest.raises(ConfigError, match="csls_k"):
        evaluate_bli(["a"], v[:1], ["b"], v[:1], {"a": ["b"]}, retrieval="csls", csls_k=0)


# --------------------------------------------------------------------------- records

#: The keys of a retrieval's scores before per-query hits were recorded.
_SCORE_KEYS = {
    "p@1", "p@5", "p@10", "mrr", "retrieval", "csls_k", "oov", "evaluated", "total",
    "denominator", "coverage", "pairs_total", "pairs_in_vocab", "pair_coverage",
    "skipped_src_oov", "skipped_gold_oov",
}  # fmt: skip


@pytest.mark.parametrize("oov", ["skip", "miss"])
def test_bli_record_keeps_per_query_hits(tmp_path: Path, oov: str) -> None:
    rng = np.random.default_rng(1)
    en = [f"e{i}" for i in range(40)]
    de = [f"d{i}" for i in range(30)]
    ev = rng.normal(size=(40, 8))
    dv = ev[:30] + 0.9 * rng.normal(size=(30, 8))
    write_vec(en, ev, tmp_path / "en.vec")
    write_vec(de, dv, tmp_path / "de.vec")
    dics = {"en-de": tmp_path / "en-de.txt", "de-en": tmp_path / "de-en.txt"}
    # e40.., d30.. are out of vocabulary on the source side; d30.. also as golds
    dics["en-de"].write_text("".join(f"e{i} d{i}\n" for i in range(0, 44, 2)), "utf-8")
    dics["de-en"].write_text("".join(f"d{i} e{i}\nd{i} e{i + 1}\n" for i in range(34)), "utf-8")
    out = tmp_path / "record.json"
    record = bli_record(
        space_name="x2s-m", seed=1, language="de", hub="en", space=tmp_path / "de.vec",
        hub_space=tmp_path / "en.vec", dictionaries=dics, out_path=out, oov=oov, device="cpu",
    )  # fmt: skip
    assert read_json(out) == record
    for direction, path in dics.items():
        res = record["results"][direction]
        assert res["queries"].split(" ") == list(read_dictionary(path))
        for retrieval in ("nn", "csls"):
            scores = res[retrieval]
            assert set(scores) == _SCORE_KEYS | {"hits@1", "hits@5", "hits@10"}
            assert scores["hits@1"].count("-") == scores["total"] - scores["evaluated"] > 0
            assert 0 < scores["p@1"] < scores["p@10"] < 1
            for k in (1, 5, 10):
                hits = bli_query_hits(record, direction, retrieval, k)
                assert len(hits) == scores["denominator"]
                assert hits.metric("hits").mean() == pytest.approx(scores[f"p@{k}"])
