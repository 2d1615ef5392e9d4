"""Sentence-pair classification: pairs encoded together and cut ``longest_first`` (and
counted), unseen labels, padding, decoding and accuracy; a tiny real fine-tuning that
beats the majority class."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from tiny_encoder import TINY_VOCAB, make_fixed_vocab_encoder, make_tiny_encoder

from xlalign.core.errors import ConfigError, InputError
from xlalign.evaluation.tasks.base import Encoded, TaskParams
from xlalign.evaluation.tasks.classification import PairClassificationTask
from xlalign.evaluation.tasks.data import PairExample
from xlalign.evaluation.tasks.finetune import finetune

ID = {w: i for i, w in enumerate(TINY_VOCAB)}
CLS, SEP, PAD = ID["[CLS]"], ID["[SEP]"], ID["[PAD]"]
LABELS = ["contradiction", "entailment", "neutral"]


def ids(text: str) -> list[int]:
    return [ID[w] for w in text.split()]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory):
    from transformers import AutoTokenizer

    path = make_fixed_vocab_encoder(tmp_path_factory.mktemp("enc") / "fixed")
    return AutoTokenizer.from_pretrained(str(path))


def test_pairs_are_encoded_together_and_cut_longest_first(tokenizer) -> None:
    task = PairClassificationTask()
    recs = [
        PairExample("long-first", "the big red cat sat on the mat", "a dog", "entailment"),
        PairExample("both-long", "the big red cat sat on", "a small dog ran on the", "neutral"),
        PairExample("short", "the cat", "a dog", "contradiction"),
    ]
    enc = task.encode(recs, tokenizer, LABELS, TaskParams(max_length=9), split="train")
    assert [f["input_ids"] for f in enc.features] == [
        # 8 + 2 subwords, room for 6: the longer side loses 4
        [CLS, *ids("the big red cat"), SEP, *ids("a dog"), SEP],
        # 6 + 6, room for 6: 3 + 3
        [CLS, *ids("the big red"), SEP, *ids("a small dog"), SEP],
        [CLS, *ids("the cat"), SEP, *ids("a dog"), SEP],
    ]
    assert enc.features[0]["token_type_ids"] == [0] * 6 + [1] * 3
    assert [f["labels"] for f in enc.features] == [1, 2, 0]
    assert enc.counts["pairs_truncated"] == 2
    assert enc.feature_example == [0, 1, 2]
    roomy = task.encode(recs, tokenizer, LABELS, TaskParams(max_length=64), split="train")
    assert "pairs_truncated" not in roomy.counts
    assert len(roomy.features[0]["input_ids"]) == 8 + 2 + 3
    with pytest.raises(ConfigError, match="max_length"):
        task.encode(recs, tokenizer, LABELS, TaskParams(max_length=4), split="train")


def test_unseen_labels_are_ignored_by_the_loss_and_counted(tokenizer) -> None:
    task = PairClassificationTask()
    recs = [PairExample("a", "the cat", "a dog", "paraphrase")]
    enc = task.encode(recs, tokenizer, LABELS, TaskParams(max_length=32), split="test")
    assert enc.features[0]["labels"] == -100
    assert enc.counts["unseen_label_examples"] == 1
    assert enc.counts["unseen_label_examples[paraphrase]"] == 1
    with pytest.raises(InputError, match="at least 2"):
        task.label_list([PairExample("a", "x", "y", "yes")])
    assert task.label_list([PairExample("a", "x", "y", "b"), PairExample("b", "x", "y", "a")]) == [
        "a",
        "b",
    ]


def test_collate_pads_ids_masks_and_token_types(tokenizer) -> None:
    task = PairClassificationTask()
    recs = [
        PairExample("a", "the big red cat", "a dog", "entailment"),
        PairExample("b", "the cat", "a", "neutral"),
    ]
    enc = task.encode(recs, tokenizer, LABELS, TaskParams(max_length=32), split="train")
    batch = task.collate(tokenizer)(enc.features)
    assert batch["input_ids"].shape == (2, 9)
    assert batch["input_ids"][1].tolist() == [
        CLS,
        *ids("the cat"),
        SEP,
        ID["a"],
        SEP,
        PAD,
        PAD,
        PAD,
    ]
    assert batch["attention_mask"][1].tolist() == [1] * 6 + [0] * 3
    assert batch["token_type_ids"][1].tolist() == [0, 0, 0, 0, 1, 1, 0, 0, 0]
    assert batch["labels"].tolist() == [1, 2]


def test_decode_and_accuracy() -> None:
    task = PairClassificationTask()
    recs = [PairExample(str(i), "x", "y", lab) for i, lab in
            enumerate(["entailment", "neutral", "neutral", "contradiction"])]  # fmt: skip
    logits = np.array([[0, 5, 1], [0, 1, 5], [5, 0, 1], [9, 0, 0]], dtype=np.float32)
    encoded = Encoded(features=[{}] * 4, feature_example=[0, 1, 2, 3])
    preds = task.decode((logits,), encoded, recs, LABELS, TaskParams())
    assert [p["prediction"] for p in preds] == [
        "entailment",
        "neutral",
        "contradiction",
        "contradiction",
    ]
    assert preds[1] == {"id": "1", "prediction": "neutral", "gold": "neutral"}
    assert task.score(preds, recs, lang="xx") == {"accuracy": 75.0, "examples": 4}
    assert task.selection_metric == "accuracy"
    with pytest.raises(ValueError, match="shape"):
        task.decode((logits[:, :2],), encoded, recs, LABELS, TaskParams())


# --------------------------------------------------------------------------- fine-tuning

NOUNS = ["dog", "cat", "bird", "fish"]
VERBS = ["runs", "sleeps", "eats"]
CUE = {"entailment": "yes", "contradiction": "no", "neutral": "maybe"}


def toy_pairs(n: int, seed: int, prefix: str) -> list[PairExample]:
    """The label is read off a cue word that ends the second sentence."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        label = rng.choice(["entailment", "entailment", "contradiction", "neutral"])
        first = f"the {rng.choice(NOUNS)} {rng.choice(VERBS)}"
        second = f"a {rng.choice(NOUNS)} {rng.choice(VERBS)} {CUE[label]}"
        out.append(PairExample(f"{prefix}{i}", first, second, label))
    return out


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_tiny_pair_finetuning_beats_the_majority_class(tmp_path: Path) -> None:
    vocab = ["the", "a", *NOUNS, *VERBS, *CUE.values()]
    encoder = make_tiny_encoder(tmp_path / "enc", vocab)
    train, dev, test = toy_pairs(160, 1, "tr"), toy_pairs(40, 2, "dv"), toy_pairs(40, 3, "te")
    params = TaskParams(learning_rate=2e-3, epochs=8, batch_size=16, max_length=16, eval_every=20)
    res = finetune(
        PairClassificationTask(),
        encoder=encoder,
        train=train,
        dev=dev,
        tests={"xx": test},
        params=params,
        seed=1,
        output_dir=tmp_path / "out",
        work_dir=tmp_path / "work",
        keep_model=False,
        progress=False,
    )
    majority = Counter(r.label for r in train).most_common(1)[0][0]
    for key, recs in (("en/dev", dev), ("xx", test)):
        baseline = 100 * sum(r.label == majority for r in recs) / len(recs)
        assert res["scores"][key]["accuracy"] > baseline + 25, (key, baseline, res["scores"])
    assert res["selection"]["metric"] == "accuracy"
    assert res["selection"]["value"] == res["scores"]["en/dev"]["accuracy"]
    assert res["labels"] == LABELS
    lines = (tmp_path / "out" / "predictions" / "xx.jsonl").read_text().splitlines()
    assert len(lines) == len(test)
