"""The NER options beside XTREME's recipe: the class-weighted token loss (against a direct
restatement with ``torch.nn.functional.cross_entropy(weight=...)``) and the entity-dense
training sample (deterministic by seed, the share it promises); tiny fixed-vocabulary BERT."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from tiny_encoder import make_fixed_vocab_encoder

from xlalign.core.errors import ConfigError
from xlalign.evaluation.tasks.base import TaskParams
from xlalign.evaluation.tasks.data import TaggedSentence, entity_sample, has_entity
from xlalign.evaluation.tasks.tagging import (
    LossSpec,
    TaggingTask,
    class_weights,
    use_weighted_loss,
    weighted_token_loss,
)

LABELS = ["B-LOC", "B-PER", "I-PER", "O"]


def _sentences(n: int, every: int) -> list[TaggedSentence]:
    """``n`` sentences; every ``every``-th holds a PER entity."""
    out = []
    for i in range(n):
        tags = ["B-PER", "I-PER", "O"] if i % every == 0 else ["O", "O", "O"]
        out.append(TaggedSentence(f"s{i}", ["the", "cat", "sat"], tags))
    return out


# --------------------------------------------------------------------------- the loss


def test_class_weights_follow_inverse_frequency_with_a_power_and_a_cap() -> None:
    assert class_weights([100, 10, 1, 0], power=1.0, max_weight=10.0) == [1.0, 10.0, 10.0, 10.0]
    w = class_weights([100, 25, 4], power=0.5, max_weight=8.0)
    assert w == pytest.approx([1.0, 2.0, 5.0])
    assert class_weights([7, 7], power=0.0, max_weight=10.0) == [1.0, 1.0]


def test_weighted_loss_is_cross_entropy_with_weight() -> None:
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 5, 4, generator=g)
    labels = torch.tensor([[-100, 3, 0, 3, -100], [-100, 1, 2, 3, 3]])
    w = torch.tensor([10.0, 4.0, 2.0, 1.0])
    got = weighted_token_loss(logits, labels, w)
    want = F.cross_entropy(logits.view(-1, 4), labels.view(-1), weight=w, ignore_index=-100)
    assert got.item() == pytest.approx(want.item(), rel=1e-6)
    # restated by hand: sum of w[y] * -log p(y) over labelled positions / sum of w[y]
    logp = logits.log_softmax(-1)
    mask = labels >= 0
    y = labels[mask]
    by_hand = -(w[y] * logp[mask].gather(1, y[:, None]).squeeze(1)).sum() / w[y].sum()
    assert got.item() == pytest.approx(by_hand.item(), rel=1e-6)
    # unit weights: the plain (XTREME) cross-entropy; other weights: another number
    plain = F.cross_entropy(logits.view(-1, 4), labels.view(-1), ignore_index=-100)
    assert weighted_token_loss(logits, labels, torch.ones(4)).item() == pytest.approx(plain.item())
    assert not math.isclose(got.item(), plain.item(), rel_tol=1e-3)


def test_the_hook_replaces_the_models_loss_and_keeps_the_logits(tmp_path: Path) -> None:
    enc = make_fixed_vocab_encoder(tmp_path / "e")
    model = TaggingTask("ner").build_model(enc, LABELS).eval()
    batch = {
        "input_ids": torch.tensor([[2, 5, 6, 7, 3]]),
        "labels": torch.tensor([[-100, 1, 2, 3, -100]]),
    }
    with torch.no_grad():
        before = model(**batch)
        w = [3.0, 2.0, 1.5, 1.0]
        handle = use_weighted_loss(model, w)
        after = model(**batch)
        no_labels = model(input_ids=batch["input_ids"])
    assert torch.equal(before.logits, after.logits)
    plain = F.cross_entropy(before.logits.view(-1, 4), batch["labels"].view(-1))
    assert before.loss.item() == pytest.approx(plain.item(), rel=1e-6)
    weighted = F.cross_entropy(
        before.logits.view(-1, 4), batch["labels"].view(-1), weight=torch.tensor(w)
    )
    assert after.loss.item() == pytest.approx(weighted.item(), rel=1e-6)
    assert no_labels.loss is None
    handle.remove()


def test_encoding_the_training_split_sets_the_weights_and_the_recipe_says_so(
    tmp_path: Path,
) -> None:
    from transformers import AutoTokenizer

    enc = make_fixed_vocab_encoder(tmp_path / "e")
    tok = AutoTokenizer.from_pretrained(str(enc))
    train = [
        TaggedSentence("a", ["the", "cat", "sat"], ["B-PER", "I-PER", "O"]),
        TaggedSentence("b", ["the", "mat"], ["O", "B-LOC"]),
        TaggedSentence("c", ["the", "cat"], ["O", "O"]),
    ]
    task = TaggingTask("ner")
    spec = {"name": "class_weighted", "power": 1, "max_weight": 3}
    params = TaskParams(extra={"loss": spec})
    labels = task.label_list(train)
    assert labels == LABELS
    task.encode(train, tok, labels, params, split="train")
    # O 4, B-LOC 1, B-PER 1, I-PER 1 labelled words: 4/1 capped at 3
    assert task.class_weights == [3.0, 3.0, 3.0, 1.0]
    task.encode(train[:1], tok, labels, params, split="dev")  # dev leaves the weights
    assert task.class_weights == [3.0, 3.0, 3.0, 1.0]
    recipe = task.recipe()
    assert recipe["loss"]["weights"] == {"B-LOC": 3.0, "B-PER": 3.0, "I-PER": 3.0, "O": 1.0}
    assert any("not XTREME's" in d for d in recipe["deviations"])
    model = task.build_model(enc, labels)
    assert len(model._forward_hooks) == 1
    # XTREME's default: no weights, no hook, nothing in the deviations
    plain = TaggingTask("ner")
    plain.encode(train, tok, labels, TaskParams(), split="train")
    assert plain.class_weights is None and plain.recipe()["deviations"] == []
    assert plain.recipe()["loss"] == {"name": "cross_entropy"}
    assert len(plain.build_model(enc, labels)._forward_hooks) == 0


def test_a_weighted_loss_needs_the_training_split_encoded_first(tmp_path: Path) -> None:
    task = TaggingTask("ner")
    task.loss = LossSpec("class_weighted")
    with pytest.raises(RuntimeError, match="training split"):
        task.build_model(make_fixed_vocab_encoder(tmp_path / "e"), LABELS)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("focal", "name must be one of"),
        ({"name": "class_weighted", "alpha": 1}, "unknown keys"),
        ({"name": "class_weighted", "power": -1}, "power"),
        ({"name": "class_weighted", "max_weight": 0.5}, "max_weight"),
        ({"name": "cross_entropy", "power": 1}, "belong to class_weighted"),
        (3, "expected a loss name"),
    ],
)
def test_bad_loss_specs_are_refused(value: object, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        LossSpec.from_extra(value)


def test_loss_spec_defaults() -> None:
    assert LossSpec.from_extra(None) == LossSpec("cross_entropy")
    assert LossSpec.from_extra("class_weighted") == LossSpec("class_weighted", 1.0, 10.0)


# --------------------------------------------------------------------------- the sample


def test_entity_sample_has_the_share_and_keeps_file_order() -> None:
    recs = _sentences(100, every=4)  # 25 with an entity
    out, stats = entity_sample(recs, 20, entity_share=0.5, seed=3)
    assert len(out) == 20 and sum(has_entity(r) for r in out) == 10
    idx = [int(r.id[1:]) for r in out]
    assert idx == sorted(idx) and len(set(idx)) == 20
    assert stats == {
        "method": "entity_share",
        "entity_share": 0.5,
        "seed": 3,
        "examples": 20,
        "with_entities": 10,
        "pool": 100,
        "pool_with_entities": 25,
    }


def test_entity_sample_is_deterministic_by_seed() -> None:
    recs = _sentences(100, every=4)
    a, _ = entity_sample(recs, 20, entity_share=1.0, seed=0)
    b, _ = entity_sample(recs, 20, entity_share=1.0, seed=0)
    c, _ = entity_sample(recs, 20, entity_share=1.0, seed=1)
    assert [r.id for r in a] == [r.id for r in b]
    assert [r.id for r in a] != [r.id for r in c]
    assert all(has_entity(r) for r in a)


def test_a_short_part_is_made_up_by_the_other() -> None:
    recs = _sentences(40, every=4)  # 10 with an entity, 30 without
    out, stats = entity_sample(recs, 20, entity_share=1.0, seed=0)
    assert len(out) == 20 and stats["with_entities"] == 10
    out, stats = entity_sample(recs, 35, entity_share=0.0, seed=0)
    assert len(out) == 35 and stats["with_entities"] == 5
    out, stats = entity_sample(recs, None, entity_share=0.3, seed=0)
    assert [r.id for r in out] == [r.id for r in recs]
    with pytest.raises(ConfigError, match="entity_share"):
        entity_sample(recs, 5, entity_share=1.5, seed=0)


def test_training_sample_of_the_task() -> None:
    recs = _sentences(60, every=3)  # 20 with an entity
    task = TaggingTask("ner")
    first = task.training_sample(recs, TaskParams(max_train_examples=12))
    assert [r.id for r in first] == [f"s{i}" for i in range(12)]
    assert task.recipe()["sample"] == {"method": "first", "examples": 12}
    extra = {"train_sample": {"entity_share": 0.75, "seed": 2}}
    dense = task.training_sample(recs, TaskParams(max_train_examples=12, extra=extra))
    assert sum(has_entity(r) for r in dense) == 9
    assert task.recipe()["deviations"] == [
        "training sample with 9 of 12 sentences holding an entity"
    ]
    again = TaggingTask("ner").training_sample(recs, TaskParams(max_train_examples=12, extra=extra))
    assert [r.id for r in again] == [r.id for r in dense]


@pytest.mark.parametrize(
    ("scheme", "spec", "match"),
    [
        ("pos", {"entity_share": 0.5}, "NER scheme"),
        ("ner", {"seed": 1}, "expected"),
        ("ner", {"entity_share": 0.5, "size": 3}, "unknown keys"),
        ("ner", {"entity_share": "half"}, "entity_share"),
        ("ner", {"entity_share": 0.5, "seed": -1}, "seed"),
    ],
)
def test_bad_sample_specs_are_refused(scheme: str, spec: dict, match: str) -> None:
    params = TaskParams(max_train_examples=5, extra={"train_sample": spec})
    with pytest.raises(ConfigError, match=match):
        TaggingTask(scheme).training_sample(_sentences(10, every=2), params)


def test_the_loss_schema_matches_the_loss_spec() -> None:
    import dataclasses

    from xlalign.config import checks

    schema = checks._EXTRA_VALUES["loss"]["anyOf"][1]
    assert set(schema["properties"]) == {f.name for f in dataclasses.fields(LossSpec)}


def test_run_finetune_trains_on_the_sample_and_records_the_recipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's stats name the sample, the loss and what differs from XTREME's recipe
    (the fine-tuning loop itself is stubbed: it only sees which records it is given)."""
    from xlalign.core.io import read_json
    from xlalign.evaluation.tasks import finetune as ft
    from xlalign.evaluation.tasks.data import write_records
    from xlalign.evaluation.tasks.run import run_finetune

    seen: dict[str, list[str]] = {}

    def fake_finetune(task: Any, *, train: list, tests: dict, **kw: Any) -> dict[str, Any]:
        seen["train"] = [r.id for r in train]
        scores = {"en/dev": {"f1": 10.0}, **{lang: {"f1": 5.0} for lang in tests}}
        return {"task": type(task).__name__, "scores": scores, "params": {}}

    monkeypatch.setattr(ft, "finetune", fake_finetune)
    recs = _sentences(40, every=4)  # 10 with an entity
    write_records(tmp_path / "train.jsonl", recs)
    write_records(tmp_path / "dev.jsonl", recs[:4])
    write_records(tmp_path / "he.jsonl", recs[:4])
    extra = {
        "train_sample": {"entity_share": 0.5, "seed": 1},
        "loss": {"name": "class_weighted", "power": 1, "max_weight": 100},
    }
    out = run_finetune(
        "ner-gold",
        encoder=tmp_path,
        encoder_name="enc",
        train=tmp_path / "train.jsonl",
        dev=tmp_path / "dev.jsonl",
        tests={"he": tmp_path / "he.jsonl"},
        seed=1,
        output_dir=tmp_path / "out",
        stats_path=tmp_path / "stats.json",
        work_dir=tmp_path / "work",
        params={"max_train_examples": 8, "extra": extra},
    )
    expected, _ = entity_sample(recs, 8, entity_share=0.5, seed=1)
    assert seen["train"] == [r.id for r in expected]
    stats = read_json(tmp_path / "stats.json")
    assert stats == out
    assert stats["recipe"]["sample"]["with_entities"] == 4
    assert stats["recipe"]["loss"]["name"] == "class_weighted"
    assert stats["params"]["extra"]["train_sample"] == {"entity_share": 0.5, "seed": 1}
    assert "not XTREME's plain cross-entropy" in stats["protocol"]
    assert "4 of 8 sentences holding an entity" in stats["protocol"]
