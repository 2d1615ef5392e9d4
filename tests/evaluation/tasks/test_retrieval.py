"""Sentence retrieval: pooling against a direct per-layer computation on a tiny BERT, one
forward pass per batch, accuracy on hand-made vectors, XTREME's layer numbering, and BUCC
mining and thresholds on hand-made cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tiny_encoder import TINY_LAYERS, make_fixed_vocab_encoder

from xlalign.core.errors import ConfigError, InputError
from xlalign.evaluation.tasks.data import RetrievalPair
from xlalign.evaluation.tasks.retrieval import (
    PoolingStats,
    bucc_candidates,
    bucc_evaluate,
    bucc_optimize_threshold,
    bucc_prf,
    evaluate_retrieval,
    layer_sweep,
    mine_candidates,
    pooled_hidden_states,
    retrieval_accuracy,
    xtreme_layer_to_hf,
)

SENTENCES = [
    "the cat sat on the mat",
    "a dog",
    "the big red sun and the small moon ran",
    "unbelievable",
    "cats",
    "the dog ran on the mat and the cat sat",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    from transformers import AutoModel, AutoTokenizer

    path = make_fixed_vocab_encoder(tmp_path_factory.mktemp("enc") / "tiny-bert")
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    return path, model, tok


def _direct(model: Any, tok: Any, sentence: str, pooling: str, include_special: bool, **kw):
    """One sentence alone, no padding: every layer pooled by hand. [layers, hidden]"""
    import torch

    enc = tok(sentence, return_tensors="pt", **kw)
    with torch.inference_mode():
        states = model(**enc, output_hidden_states=True).hidden_states
    rows = []
    for h in states:
        h = h[0].numpy()
        if pooling == "cls":
            rows.append(h[0])
        elif include_special:
            rows.append(h.mean(axis=0))
        else:  # [CLS] first, [SEP] last
            rows.append(h[1:-1].mean(axis=0))
    return np.stack(rows)


@pytest.mark.parametrize(
    ("pooling", "include_special"), [("mean", True), ("mean", False), ("cls", True)]
)
def test_pooling_matches_a_direct_per_layer_computation(tiny, pooling, include_special) -> None:
    _, model, tok = tiny
    got = pooled_hidden_states(
        (model, tok), SENTENCES, pooling=pooling, include_special=include_special, batch_size=4
    )
    assert got.shape == (TINY_LAYERS + 1, len(SENTENCES), 16)
    assert got.dtype == np.float32
    for i, s in enumerate(SENTENCES):  # input order restored after sorting by length
        np.testing.assert_allclose(
            got[:, i], _direct(model, tok, s, pooling, include_special), atol=1e-5
        )
    # special tokens make a difference, so the option is real
    if pooling == "mean":
        other = pooled_hidden_states(
            (model, tok), SENTENCES[:1], include_special=not include_special
        )
        assert not np.allclose(other[:, 0], got[:, 0])


def test_pooling_loads_a_directory_and_selects_layers(tiny) -> None:
    path, model, tok = tiny
    got = pooled_hidden_states(path, SENTENCES[:3], layers=[0, TINY_LAYERS], device="cpu")
    full = pooled_hidden_states((model, tok), SENTENCES[:3])
    np.testing.assert_allclose(got, full[[0, TINY_LAYERS]], atol=1e-5)
    with pytest.raises(ConfigError, match=r"outside 0\.\.3"):
        pooled_hidden_states((model, tok), SENTENCES, layers=[4])
    with pytest.raises(ConfigError, match="pooling"):
        pooled_hidden_states((model, tok), SENTENCES, pooling="max")


def _count_forward(model: Any) -> list[int]:
    calls = [0]
    forward = model.forward

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return forward(*args, **kwargs)

    model.forward = counting
    return calls


def test_one_forward_pass_per_batch_for_every_layer(tiny) -> None:
    _, model, tok = tiny
    calls = _count_forward(model)
    try:
        stats = PoolingStats()
        states = pooled_hidden_states((model, tok), SENTENCES, batch_size=4, stats=stats)
        assert calls[0] == 2 == stats.batches  # 6 sentences, batches of 4
        assert states.shape[0] == TINY_LAYERS + 1
        pairs = [RetrievalPair(str(i), s, s) for i, s in enumerate(SENTENCES)]
        calls[0] = 0
        res = evaluate_retrieval(pairs, model, tok, layer=2, batch_size=4)
        assert calls[0] == 4 == res["counts"]["forward_passes"]  # 2 per side, not per layer
        assert len(res["sweep"]["xx->en"]) == TINY_LAYERS + 1
    finally:
        del model.forward


def test_truncation_is_counted_and_matches_the_tokenizer_cut(tiny) -> None:
    _, model, tok = tiny
    stats = PoolingStats()
    got = pooled_hidden_states((model, tok), SENTENCES, max_length=6, stats=stats)
    lengths = [len(tok(s)["input_ids"]) for s in SENTENCES]
    assert stats.truncated == sum(n > 6 for n in lengths) == 3
    assert stats.truncated_mask == [n > 6 for n in lengths]
    assert stats.longest == max(lengths)
    for i, s in enumerate(SENTENCES):
        ref = _direct(model, tok, s, "mean", True, truncation=True, max_length=6)
        np.testing.assert_allclose(got[:, i], ref, atol=1e-5)
    # the model's own limit (64 positions) caps a larger request
    stats = PoolingStats()
    pooled_hidden_states((model, tok), SENTENCES[:1], max_length=512, stats=stats)
    assert stats.max_length == 64


def test_empty_sentences_are_counted(tiny) -> None:
    _, model, tok = tiny
    stats = PoolingStats()
    got = pooled_hidden_states((model, tok), ["", "a dog"], include_special=False, stats=stats)
    assert stats.empty == 1 and stats.empty_mask == [True, False]
    assert np.isnan(got[:, 0]).all() and np.isfinite(got[:, 1]).all()
    with_special = pooled_hidden_states((model, tok), ["", "a dog"])
    assert np.isfinite(with_special).all()  # [CLS] [SEP] alone still average to a vector


# ------------------------------------------------------------------ accuracy


def test_retrieval_accuracy_on_hand_made_vectors() -> None:
    src = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    tgt = np.array([[1.0, 0.18], [0.1, 1.0], [1.0, -0.27]]) * np.array([[5.0], [1.0], [2.0]])
    res = retrieval_accuracy(src, tgt, src_texts=["a", "b", "c"], tgt_texts=["x", "y", "x"])
    # cosines (rows s0..s2, columns t0..t2; the scaling of tgt rows does not matter):
    # s0 .984 .100 .965 / s1 .177 .995 -.261 / s2 .821 .774 .498
    # xx->en: s2 is closer to t0 than to its gold t2; en->xx: t2 is closer to s0 than s2
    assert res["predictions"] == {"xx->en": [0, 1, 0], "en->xx": [0, 1, 0]}
    assert res["accuracy"]["xx->en"] == pytest.approx(200 / 3)
    assert res["accuracy"]["en->xx"] == pytest.approx(200 / 3)
    # t0 and t2 have the same text: retrieving t0 for s2 is right by text
    assert res["accuracy_text"]["xx->en"] == 100.0
    assert res["accuracy_text"]["en->xx"] == pytest.approx(200 / 3)


def test_retrieval_accuracy_rejects_bad_input() -> None:
    with pytest.raises(InputError, match="alike"):
        retrieval_accuracy(np.ones((3, 2)), np.ones((2, 2)))
    with pytest.raises(InputError, match="NaN"):
        retrieval_accuracy(np.array([[np.nan, 1.0]]), np.ones((1, 2)))


def test_layer_sweep_is_accuracy_per_layer() -> None:
    rng = np.random.default_rng(0)
    src = rng.normal(size=(3, 20, 8))
    tgt = src + rng.normal(scale=[[[0.01]], [[10.0]], [[0.01]]], size=src.shape)
    sweep = layer_sweep(src, tgt)
    for layer in range(3):
        acc = retrieval_accuracy(src[layer], tgt[layer])["accuracy"]
        assert sweep["xx->en"][layer] == acc["xx->en"]
        assert sweep["en->xx"][layer] == acc["en->xx"]
    assert sweep["xx->en"][0] == 100.0 and sweep["xx->en"][1] < 50.0


def test_evaluate_retrieval_end_to_end(tiny) -> None:
    _, model, tok = tiny
    texts = [*SENTENCES, "a dog"]  # "a dog" twice: a duplicate on both sides
    pairs = [RetrievalPair(f"p{i}", s, s) for i, s in enumerate(texts)]
    res = evaluate_retrieval(pairs, model, tok, layer=2, max_length=6)
    # identical texts give identical vectors: only the duplicate pair can go wrong by index
    assert res["accuracy_text"] == {"xx->en": 100.0, "en->xx": 100.0}
    assert res["accuracy"]["xx->en"] >= 100 * 6 / 7 - 1e-9
    assert res["sweep"]["xx->en"][2] == res["accuracy"]["xx->en"]
    assert len(res["sweep"]["en->xx"]) == TINY_LAYERS + 1
    counts = res["counts"]
    assert counts["pairs"] == counts["evaluated"] == 7
    assert counts["duplicate_source"] == counts["duplicate_target"] == 2
    assert counts["truncated_source"] == counts["truncated_target"] == 3
    assert res["predictions"]["ids"] == [p.id for p in pairs]
    assert res["predictions"]["xx->en"][0] == "p0"
    assert res["layer_convention"] == "hf_hidden_states"
    assert (res["layer"], res["depth"], res["pooling"], res["include_special"]) == (
        2,
        TINY_LAYERS,
        "mean",
        True,
    )
    with pytest.raises(ConfigError, match=r"outside 0\.\.3"):
        evaluate_retrieval(pairs, model, tok, layer=4)


def test_evaluate_retrieval_skips_pairs_without_content(tiny) -> None:
    _, model, tok = tiny
    # "\u200b" (zero-width space) is not blank for RetrievalPair, but yields no subword
    pairs = [
        RetrievalPair("a", "the cat", "the cat"),
        RetrievalPair("b", "\u200b", "a dog"),
        RetrievalPair("c", "the sun", "the sun"),
    ]
    res = evaluate_retrieval(pairs, model, tok, layer=1, include_special=False)
    assert res["counts"]["skipped_empty"] == 1 and res["counts"]["evaluated"] == 2
    assert res["predictions"]["ids"] == ["a", "c"]


# ------------------------------------------------------------------ layer numbering


@pytest.mark.parametrize(
    ("layer", "depth", "num_layers", "hf"),
    [
        (7, 12, 12, 8),  # XTREME's Tatoeba layer of mBERT / a 12-layer model
        (0, 12, 12, 1),  # the slice drops the embedding output
        (11, 12, 12, 12),
        (7, 24, 12, 20),  # a 24-layer model with the default --num_layers 12
        (13, 24, 24, 14),  # run_tatoeba.sh's XLM-R large setting
        (10, 24, 24, 11),  # the layer PR #104 finds reproduces the paper's XLM-R large
        (7, 12, 24, 7),  # --num_layers 24 on 13 states keeps them all, embeddings first
    ],
)
def test_xtreme_layer_to_hf(layer: int, depth: int, num_layers: int, hf: int) -> None:
    assert xtreme_layer_to_hf(layer, depth, num_layers=num_layers) == hf


def test_xtreme_layer_to_hf_rejects_missing_layers() -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        xtreme_layer_to_hf(7, 6)  # 7 states only
    with pytest.raises(ConfigError, match="does not exist"):
        xtreme_layer_to_hf(13, 12, num_layers=24)  # xlm-roberta-base under run_tatoeba.sh


# ------------------------------------------------------------------ BUCC


def test_bucc_threshold_maximises_f1_hand_computed() -> None:
    cands = {("a", "x"): 0.9, ("b", "y"): 0.8, ("c", "z"): 0.7, ("d", "w"): 0.6}
    gold = [("a", "x"), ("c", "z"), ("e", "v")]
    # F1 after each candidate: .5, .4, .667, .571 -> best after the third: (0.7 + 0.6) / 2
    th = bucc_optimize_threshold(cands, gold)
    assert th == pytest.approx(0.65)
    out = bucc_prf(cands, gold, th)
    assert (out["extracted"], out["correct"], out["gold"]) == (3, 2, 3)
    assert out["f1"] == pytest.approx(200 / 3)
    # the best F1 at the last candidate: its own score (XTREME's code indexes past the end)
    assert bucc_optimize_threshold({("a", "x"): 0.9}, [("a", "x")]) == 0.9
    assert bucc_optimize_threshold({("a", "x"): 0.9}, [("b", "y")]) == 0.0
    assert bucc_prf({("a", "x"): 0.9}, [("b", "y")], 0.0)["f1"] == 0.0


def _reference_mining(x: np.ndarray, y: np.ndarray, k: int) -> list[tuple[int, int]]:
    """The ratio-margin "max" mining restated with plain loops."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    sim = x @ y.T
    kx, ky = min(k, len(y)), min(k, len(x))
    mx = np.array([np.sort(sim[i])[::-1][:kx].mean() for i in range(len(x))])
    my = np.array([np.sort(sim[:, j])[::-1][:ky].mean() for j in range(len(y))])
    proposals = []
    for i in range(len(x)):
        nn = np.argsort(-sim[i])[:kx]
        sc = [sim[i, j] / ((mx[i] + my[j]) / 2) for j in nn]
        proposals.append((max(sc), i, int(nn[int(np.argmax(sc))])))
    for j in range(len(y)):
        nn = np.argsort(-sim[:, j])[:ky]
        sc = [sim[i, j] / ((my[j] + mx[i]) / 2) for i in nn]
        proposals.append((max(sc), int(nn[int(np.argmax(sc))]), j))
    taken_s, taken_t, out = set(), set(), []
    for score, i, j in sorted(proposals, key=lambda p: -p[0]):
        if i not in taken_s and j not in taken_t:
            taken_s.add(i)
            taken_t.add(j)
            if score > 0:
                out.append((i, j))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_mining_matches_the_restated_definition(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(12, 6)) + 1.0
    y = np.concatenate([x[:8] + rng.normal(scale=0.3, size=(8, 6)), rng.normal(size=(5, 6))])
    mined = mine_candidates(x, y, k=4)
    assert [(s, t) for s, t, _ in mined] == _reference_mining(x, y, 4)
    found = {(s, t) for s, t, _ in mined}
    assert sum((i, i) in found for i in range(8)) >= 6  # the noisy translations are found


def test_bucc_candidates_drop_repeated_sentences() -> None:
    e = np.eye(3)
    src = np.stack([e[0], e[1], e[0]])  # "a" twice
    tgt = np.stack([e[0], e[1], e[2]])
    cands = bucc_candidates(
        src, tgt, ["a", "b", "a"], ["A", "B", "C"], ["s1", "s2", "s3"], ["t1", "t2", "t3"]
    )
    assert ("s2", "t2") in cands
    assert not any(s in ("s1", "s3") for s, _ in cands)  # "a" maps to no id, as in XTREME


def test_bucc_evaluate_applies_the_dev_threshold_to_test() -> None:
    rng = np.random.default_rng(1)

    def split(n_pairs: int, n_noise: int, tag: str) -> dict[str, Any]:
        base = rng.normal(size=(n_pairs, 16))
        src = np.concatenate([base, rng.normal(size=(n_noise, 16))])
        tgt = np.concatenate(
            [base + rng.normal(scale=0.2, size=base.shape), rng.normal(size=(n_noise, 16))]
        )
        n = n_pairs + n_noise
        return {
            "src": src,
            "tgt": tgt,
            "src_texts": [f"{tag}s{i}" for i in range(n)],
            "tgt_texts": [f"{tag}t{i}" for i in range(n)],
            "src_ids": [f"s{i}" for i in range(n)],
            "tgt_ids": [f"t{i}" for i in range(n)],
            "gold": [(f"s{i}", f"t{i}") for i in range(n_pairs)],
        }

    dev, test = split(10, 30, "d"), split(12, 40, "t")
    out = bucc_evaluate(dev, test)
    assert out["protocol"] == "BUCC F1 (XTREME protocol)"
    assert out["test"]["threshold"] == out["dev"]["threshold"] == out["threshold"]
    assert out["threshold"] == bucc_optimize_threshold(
        bucc_candidates(
            dev["src"], dev["tgt"], dev["src_texts"], dev["tgt_texts"], dev["src_ids"],
            dev["tgt_ids"],
        ),
        dev["gold"],
    )  # fmt: skip
    assert out["test"]["f1"] > 80.0
    assert "not XTREME" in bucc_evaluate(dev, test, margin="absolute")["protocol"]
