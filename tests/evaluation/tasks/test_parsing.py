"""Dependency parsing: biaffine scorers by hand, Chu-Liu/Edmonds against brute force,
features and counts, decoding and LAS/UAS by hand, and a real treebank (Turkish, from the
``turkish-treebanks`` package) through the fine-tuning loop."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_encoder import TINY_VOCAB, make_fixed_vocab_encoder, make_tiny_encoder

from xlalign.core.errors import ConfigError
from xlalign.evaluation.tasks.base import Encoded, TaskParams
from xlalign.evaluation.tasks.data import ParsedSentence
from xlalign.evaluation.tasks.parsing import (
    BiaffineArc,
    BiaffineLabel,
    BiaffineParser,
    ParsingTask,
    is_tree,
    mst_heads,
)

ID = {w: i for i, w in enumerate(TINY_VOCAB)}
CLS, SEP = ID["[CLS]"], ID["[SEP]"]
NEG = -np.inf


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_fixed_vocab_encoder(tmp_path_factory.mktemp("enc") / "fixed")


@pytest.fixture(scope="module")
def tokenizer(fixed: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(fixed))


# --------------------------------------------------------------------------- scorers


def test_biaffine_arc_score_by_hand() -> None:
    arc = BiaffineArc(2)
    with torch.no_grad():
        arc.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        arc.head_bias.copy_(torch.tensor([1.0, -1.0]))
    dep = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])  # (1, 2 dependents, 2)
    head = torch.tensor([[[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]]])  # (1, 3 heads, 2)
    # d U = [1, 2] and [3, 4]; u . h = -1, 0, 2
    expected = torch.tensor([[[2 - 1, 3 + 0, 2 + 2], [4 - 1, 7 + 0, 6 + 2]]])
    assert torch.equal(arc(dep, head), expected)


def test_biaffine_label_score_by_hand() -> None:
    lab = BiaffineLabel(1, 2)
    with torch.no_grad():
        lab.weight.copy_(torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[0.0, 0.0], [0.0, 1.0]]]))
    dep = torch.tensor([[[2.0]]])
    head = torch.tensor([[[3.0]]])
    # [2, 1] W_0 [3, 1] = 2 (1*3 + 2*1) + (3*3 + 4*1) = 23; [2, 1] W_1 [3, 1] = 1 (the bias)
    out = lab(dep, head)
    assert out.shape == (1, 1, 2)
    assert out.flatten().tolist() == [23.0, 1.0]


def test_parser_forward_loss_masks_and_decoding(fixed: Path) -> None:
    from transformers import AutoModel

    torch.manual_seed(0)
    model = BiaffineParser(AutoModel.from_pretrained(str(fixed)), 3, arc_dim=8, label_dim=4)
    # "the cat sat" and "un ##believ ##able ." : word starts 1, 2, 3 and 1, 4
    ids = torch.tensor(
        [
            [CLS, ID["the"], ID["cat"], ID["sat"], SEP],
            [CLS, ID["un"], ID["##believ"], ID["##able"], ID["."]],
        ]
    )
    mask = torch.ones_like(ids)
    starts = torch.tensor([[1, 2, 3], [1, 4, 0]])
    heads = torch.tensor([[2, 0, 2], [0, 1, -100]])
    rels = torch.tensor([[0, 1, 2], [1, -100, -100]])
    out = model(ids, mask, starts, head_labels=heads, rel_labels=rels)
    assert out.loss.ndim == 0 and torch.isfinite(out.loss)
    assert out.heads is None  # training mode: the loss only
    out.loss.backward()
    assert model.arc.weight.grad is not None and model.label.weight.grad.abs().sum() > 0
    model.eval()
    with torch.no_grad():
        out = model(ids, mask, starts)
    assert out.loss is None
    for h, r in ((out.heads, out.rels), (out.tree_heads, out.tree_rels)):
        assert h.shape == r.shape == (2, 3)
        assert h[1, 2] == -100 and r[1, 2] == -100  # past the second sentence's end
        for b, n in ((0, 3), (1, 2)):
            assert all(0 <= int(x) <= n and int(x) != i + 1 for i, x in enumerate(h[b, :n]))
            assert all(0 <= int(x) < 3 for x in r[b, :n])
    assert is_tree(out.tree_heads[0].tolist()) and is_tree(out.tree_heads[1, :2].tolist())


# --------------------------------------------------------------------------- trees


def test_mst_breaks_the_cycle_argmax_makes() -> None:
    # words 1 and 2 prefer each other (a cycle); word 3 prefers word 2
    scores = np.array(
        [
            # root  w1    w2    w3
            [1.0, NEG, 10.0, 0.0],  # word 1
            [2.0, 10.0, NEG, 0.0],  # word 2
            [0.0, 1.0, 5.0, NEG],  # word 3
        ]
    )
    assert scores.argmax(1).tolist() == [2, 1, 2]  # not a tree
    # break the cycle at word 2 (2 + 10 + 5 = 17) rather than at word 1 (1 + 10 + 5 = 16)
    assert mst_heads(scores) == [2, 0, 2]


def test_mst_keeps_a_single_root() -> None:
    scores = np.array(
        [
            [5.0, NEG, 1.0],  # word 1: root
            [4.0, 0.0, NEG],  # word 2: root
        ]
    )
    assert mst_heads(scores, single_root=False) == [0, 0]  # 9: two roots
    assert mst_heads(scores) == [0, 1]  # 5 + 0 beats 4 + 1


def _brute_force(scores: np.ndarray, single_root: bool) -> float:
    n = scores.shape[0]
    best = -np.inf
    for heads in itertools.product(range(n + 1), repeat=n):
        if any(h == i + 1 for i, h in enumerate(heads)):
            continue
        roots = sum(h == 0 for h in heads)
        if single_root and roots != 1:
            continue
        # a tree iff every word reaches the root
        ok = True
        for i in range(n):
            v, steps = i + 1, 0
            while v != 0 and steps <= n:
                v, steps = heads[v - 1], steps + 1
            ok &= v == 0
        if ok:
            best = max(best, sum(scores[i, h] for i, h in enumerate(heads)))
    return best


def test_mst_is_exact_against_brute_force() -> None:
    rng = np.random.default_rng(0)
    for trial in range(120):
        n = int(rng.integers(1, 6))
        scores = rng.normal(size=(n, n + 1)) * 3
        if trial % 2:
            scores[rng.random((n, n + 1)) < 0.3] = NEG
            scores[:, 0] = rng.normal(size=n)
        for single in (True, False):
            expected = _brute_force(scores, single)
            if expected == NEG:  # forbidden arcs leave no one-root tree
                continue
            heads = mst_heads(scores, single_root=single)
            got = sum(scores[i, h] for i, h in enumerate(heads))
            assert got == pytest.approx(expected)
            if single:
                assert is_tree(heads)


def test_is_tree() -> None:
    assert is_tree([2, 0, 2])
    assert not is_tree([2, 1, 0])  # a cycle
    assert not is_tree([0, 0, 2])  # two roots
    assert not is_tree([2, 3, 1])  # no root
    assert not is_tree([4, 0])  # a head outside the sentence


# --------------------------------------------------------------------------- features


def _sent(sid: str, tokens: list[str], heads: list[int], rels: list[str]) -> ParsedSentence:
    upos = ["PUNCT" if t in ".," else "X" for t in tokens]
    return ParsedSentence(sid, tokens, upos, heads, rels)


def test_label_list_keeps_universal_relations() -> None:
    recs = [
        _sent("a", ["the", "cat"], [2, 0], ["det", "root"]),
        _sent("b", ["a"], [0], ["nmod:poss"]),
    ]
    assert ParsingTask().label_list(recs) == ["det", "nmod", "root"]


def test_encode_first_subwords_long_sentences_and_unseen_relations(tokenizer) -> None:
    short = _sent(
        "s", ["the", "unbelievable", "cat", "."], [3, 3, 0, 3], ["det", "amod", "root", "punct"]
    )
    long = _sent("l", "the cat sat on the mat .".split(), [2, 3, 0, 6, 6, 3, 3], ["det"] * 7)
    huge = _sent("h", ["cat"] * 70, [0] + [1] * 69, ["dep"] * 70)
    labels = ["amod", "det", "punct", "root"]
    params = TaskParams(max_length=8)  # [CLS] + 6 subwords + [SEP]
    task = ParsingTask()
    enc = task.encode([short, long, huge], tokenizer, labels, params, split="train")
    assert enc.feature_example == [0]  # 9 and 72 subwords: skipped
    assert enc.counts["sentences_too_long"] == 2
    (feat,) = enc.features
    un, believ, able = ID["un"], ID["##believ"], ID["##able"]
    assert feat["input_ids"] == [CLS, ID["the"], un, believ, able, ID["cat"], ID["."], SEP]
    assert feat["word_starts"] == [1, 2, 5, 6]
    assert feat["head_labels"] == [3, 3, 0, 3]
    assert feat["rel_labels"] == [1, 0, 3, 2]
    # evaluation: whole sentences up to the tokenizer's 64 subwords; "dep" never seen
    enc = task.encode([short, long, huge], tokenizer, labels, params, split="test")
    assert enc.feature_example == [0, 1]
    assert enc.counts["sentences_too_long"] == 1
    assert "unseen_relation_words" not in enc.counts  # the 70-word one has no feature
    enc = task.encode([huge], tokenizer, labels, TaskParams(max_length=80), split="test")
    assert enc.counts["unseen_relation_words[dep]"] == 70
    assert enc.features[0]["rel_labels"] == [-100] * 70


def test_a_tokenizer_without_a_leading_special_token_is_refused(tokenizer) -> None:
    class NoCls:
        def __call__(self, *a, **kw):
            return tokenizer(*a, **{**kw, "add_special_tokens": False})

        def __getattr__(self, name):
            return getattr(tokenizer, name)

    with pytest.raises(ConfigError, match="root"):
        ParsingTask().encode(
            [_sent("a", ["cat"], [0], ["root"])], NoCls(), ["root"], TaskParams(), split="train"
        )


def test_collate_pads_subwords_and_words_apart(tokenizer) -> None:
    batch = [
        {
            "input_ids": [CLS, 5, 6, SEP],
            "word_starts": [1, 2],
            "head_labels": [2, 0],
            "rel_labels": [0, 1],
        },
        {
            "input_ids": [CLS, 5, 6, 7, 8, SEP],
            "word_starts": [1],
            "head_labels": [0],
            "rel_labels": [1],
        },
    ]
    out = ParsingTask().collate(tokenizer)(batch)
    assert out["input_ids"].shape == out["attention_mask"].shape == (2, 6)
    assert out["attention_mask"][0].tolist() == [1, 1, 1, 1, 0, 0]
    assert out["word_starts"].tolist() == [[1, 2], [1, 0]]
    assert out["head_labels"].tolist() == [[2, 0], [0, -100]]
    assert out["rel_labels"].tolist() == [[0, 1], [1, -100]]


# --------------------------------------------------------------------------- scores


def test_decode_and_attachment_scores_by_hand() -> None:
    labels = ["det", "nsubj", "punct", "root"]
    recs = [
        ParsedSentence(
            "1",
            ["the", "dog", "barks", "."],
            ["DET", "NOUN", "VERB", "PUNCT"],
            [2, 3, 0, 3],
            ["det", "nsubj", "root", "punct"],
        ),
        ParsedSentence("2", ["$", "up"], ["SYM", "ADV"], [2, 0], ["nsubj:pass", "root"]),
        ParsedSentence("3", ["too", "long"], ["ADV", "ADJ"], [2, 0], ["det", "root"]),
    ]
    enc = Encoded(features=[{}, {}], feature_example=[0, 1])  # sentence 3 had no feature
    pad = -100
    # argmax: "barks" attached to "the" (a cycle, no root); tree decoding: the gold
    # heads, "dog" labelled det
    heads = np.array([[2, 3, 1, 3], [2, 0, pad, pad]])
    rels = np.array([[0, 1, 3, 2], [1, 3, pad, pad]])
    tree_heads = np.array([[2, 3, 0, 3], [2, 0, pad, pad]])
    tree_rels = np.array([[0, 0, 3, 2], [1, 3, pad, pad]])
    outputs = (heads, rels, tree_heads, tree_rels)
    task = ParsingTask()
    preds = task.decode(outputs, enc, recs, labels, TaskParams())
    assert [p["decoding"] for p in preds] == ["mst"] * 3
    assert preds[0]["prediction"] == {
        "heads": [2, 3, 0, 3],
        "deprels": ["det", "det", "root", "punct"],
    }
    assert preds[2]["prediction"] == {"heads": [-1, -1], "deprels": ["_", "_"]}
    assert preds[2]["too_long"] and preds[1]["gold"]["upos"] == ["SYM", "ADV"]
    s = task.score(preds, recs, lang="xx")
    # scored words (PUNCT "." and SYM "$" left out): the dog barks | up | too long
    # heads right: 3 + 1 + 0 = 4 of 6; labels right too: the, barks, up = 3
    assert (s["words"], s["punct_excluded"]) == (6, 2)
    assert s["uas"] == pytest.approx(100 * 4 / 6) and s["las"] == pytest.approx(100 * 3 / 6)
    # all 8 words: "." right (head and label), "$" right ("nsubj:pass" counts as nsubj)
    assert s["uas_all_words"] == pytest.approx(100 * 6 / 8)
    assert s["las_all_words"] == pytest.approx(100 * 5 / 8)
    assert (s["too_long"], s["not_trees"], s["sentences"]) == (1, 0, 3)
    # argmax decoding through params.extra: "barks" -> "the" leaves sentence 1 rootless
    params = TaskParams(extra={"decoding": "argmax", "exclude_punct": False})
    preds = task.decode(outputs, enc, recs, labels, params)
    s = task.score(preds, recs, lang="xx")
    assert s["decoding"] == "argmax" and s["not_trees"] == 1
    assert s["uas"] == s["uas_all_words"] == pytest.approx(100 * 5 / 8)
    with pytest.raises(ConfigError):
        task.decode(outputs, enc, recs, labels, TaskParams(extra={"decoding": "greedy"}))


# --------------------------------------------------------------------------- a treebank


def test_turkish_treebank_through_the_fine_tuning_loop(tmp_path: Path) -> None:
    """Train on the web part of the Turkish treebank, select on held-out web sentences,
    test on the wiki part (tiny random encoder): the parser must beat the trivial
    attachments "previous word" and "root" by a wide margin."""
    from xlalign.corpus.udpipe import turkish_treebank_path
    from xlalign.evaluation.tasks.finetune import finetune
    from xlalign.evaluation.tasks.formats import read_ud_parse

    def sentences(section: str, n: int) -> list[ParsedSentence]:
        recs = read_ud_parse([turkish_treebank_path(section)]).records
        return [r for r in recs if len(r.tokens) <= 25][:n]

    web, test = sentences("web", 350), sentences("wiki", 200)
    train, dev = web[:300], web[300:]
    encoder = make_tiny_encoder(tmp_path / "enc", [" ".join(r.tokens) for r in train], layers=1)
    params = TaskParams(
        learning_rate=3e-3,
        epochs=20,
        batch_size=16,
        max_length=256,
        selection="dev",
        eval_every=95,
    )
    task = ParsingTask(arc_dim=128, label_dim=32, dropout=0.0)
    res = finetune(
        task,
        encoder=encoder,
        train=train,
        dev=dev,
        tests={"tr-wiki": test},
        params=params,
        seed=1,
        output_dir=tmp_path / "out",
        work_dir=tmp_path / "work",
        keep_model=False,
        progress=False,
    )
    scores = res["scores"]["tr-wiki"]
    assert scores["too_long"] == 0 and scores["not_trees"] == 0
    total = previous = root = 0
    for r in test:
        for i, (h, u) in enumerate(zip(r.heads, r.upos, strict=True)):
            if u not in ("PUNCT", "SYM"):
                total += 1
                previous += h == i  # word i + 1 attached to word i
                root += h == 0
    baseline = 100 * max(previous, root) / total
    assert scores["uas"] > baseline + 20
    assert 0 < scores["las"] <= scores["uas"]
    assert res["selection"]["mode"] == "dev" and res["selection"]["evaluations"] >= 2
