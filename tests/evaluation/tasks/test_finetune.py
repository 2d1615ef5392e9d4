"""The fine-tuning loop on a tiny random BERT and a toy but learnable POS task: it learns
(beats the majority class), selects on dev, writes predictions and results, is
deterministic by seed, resumes after a kill to the same result, counts unseen test
labels; plus the loop's helpers (evaluation order, length-grouped sampling, precision,
checkpoint bookkeeping)."""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tiny_encoder import make_tiny_encoder
from transformers import TrainerCallback

from xlalign.core.errors import ConfigError
from xlalign.core.io import write_json
from xlalign.evaluation.tasks.base import TaskParams
from xlalign.evaluation.tasks.data import TaggedSentence
from xlalign.evaluation.tasks.finetune import (
    CHECKPOINTS,
    FINGERPRINT,
    LengthGroupedSampler,
    _per_device_batch,
    _prepare_work_dir,
    _stamp_work_dir,
    finetune,
    last_checkpoint,
    longest_first,
    resolve_precision,
    restore_order,
)
from xlalign.evaluation.tasks.tagging import TaggingTask

LEX = {
    "DET": ["the", "a", "this"],
    "NOUN": ["dog", "cat", "bird", "fish", "horse", "mouse"],
    "VERB": ["runs", "sleeps", "eats", "jumps"],
    "ADV": ["quickly", "slowly", "often"],
}


def toy_sentences(n: int, seed: int, prefix: str) -> list[TaggedSentence]:
    """DET NOUN VERB [ADV] clauses joined by "and"; "fly" is a NOUN after a determiner
    and a VERB after a noun (the tag needs the context)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words: list[tuple[str, str]] = []
        for k in range(rng.randint(1, 3)):
            if k:
                words.append(("and", "CONJ"))
            noun = "fly" if rng.random() < 0.2 else rng.choice(LEX["NOUN"])
            verb = "fly" if rng.random() < 0.2 else rng.choice(LEX["VERB"])
            words += [(rng.choice(LEX["DET"]), "DET"), (noun, "NOUN"), (verb, "VERB")]
            if rng.random() < 0.5:
                words.append((rng.choice(LEX["ADV"]), "ADV"))
        out.append(TaggedSentence(f"{prefix}{i}", [w for w, _ in words], [t for _, t in words]))
    return out


TRAIN = toy_sentences(200, 1, "tr")
DEV = toy_sentences(40, 2, "dv")
TEST = toy_sentences(30, 3, "te")
# a test language with a tag training never saw ("X" on every "and")
TEST_X = [
    TaggedSentence(r.id, r.tokens, ["X" if t == "CONJ" else t for t in r.tags])
    for r in toy_sentences(30, 4, "tx")
]
# 200 sentences / 16 = 13 steps per epoch, 3 epochs = 39 steps; dev at 10, 20, 30 and 39
PARAMS = TaskParams(learning_rate=5e-3, epochs=3, batch_size=16, max_length=16, eval_every=10)
STEPS = 39


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    words = [w for ws in LEX.values() for w in ws] + ["and", "fly"]
    return make_tiny_encoder(tmp_path_factory.mktemp("tiny") / "enc", words)


def run(
    encoder: Path, root: Path, *, seed: int = 1, params: TaskParams = PARAMS, **kw: Any
) -> dict[str, Any]:
    """The toy run; resume checkpoints at every evaluation unless ``checkpoint_minutes``
    says otherwise (the resume tests need them)."""
    kw.setdefault("checkpoint_minutes", 0)
    return finetune(
        TaggingTask("pos"),
        encoder=encoder,
        train=TRAIN,
        dev=DEV,
        tests={"xx": TEST, "yy": TEST_X},
        params=params,
        seed=seed,
        output_dir=root / "out",
        work_dir=root / "work",
        log_every=5,
        progress=False,
        **kw,
    )


@pytest.fixture(scope="module")
def reference(encoder: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    root = tmp_path_factory.mktemp("ref")
    return run(encoder, root), root


def losses(results: dict[str, Any]) -> tuple[list, list]:
    curve = results["learning_curve"]
    return [p["loss"] for p in curve["train"]], [p["loss"] for p in curve["dev"]]


def test_tiny_finetuning_beats_the_majority_class(reference) -> None:
    results, _ = reference
    majority_tag = Counter(t for r in TRAIN for t in r.tags).most_common(1)[0][0]
    for key, recs in (("en/dev", DEV), ("xx", TEST)):
        tags = [t for r in recs for t in r.tags]
        baseline = 100 * tags.count(majority_tag) / len(tags)
        assert baseline < 40
        assert results["scores"][key]["accuracy"] > baseline + 40, (key, results["scores"])
    assert results["scores"]["en/dev"]["f1"] > 50


def test_selection_keeps_the_best_dev_evaluation(reference) -> None:
    results, _ = reference
    curve = results["learning_curve"]
    assert [p["step"] for p in curve["dev"]] == [10, 20, 30, STEPS]
    assert [p["step"] for p in curve["train"]] == [5, 10, 15, 20, 25, 30, 35]
    f1 = [p["f1"] for p in curve["dev"]]
    first_best = curve["dev"][int(np.argmax(f1))]["step"]
    sel = results["selection"]
    assert (sel["mode"], sel["metric"], sel["step"]) == ("dev", "f1", first_best)
    assert sel["value"] == max(f1) == results["scores"]["en/dev"]["f1"]
    assert results["steps"] == STEPS and results["resumed_from_step"] is None
    assert results["curves"]["dev_f1"] == f1


def test_outputs_predictions_results_and_model(reference) -> None:
    results, root = reference
    out = root / "out"
    assert not (root / "work").exists()  # checkpoints removed on success
    assert json.loads((out / "results.json").read_text()) == json.loads(json.dumps(results))
    assert results["predictions"] == {
        "en/dev": "predictions/en.dev.jsonl",
        "xx": "predictions/xx.jsonl",
        "yy": "predictions/yy.jsonl",
    }
    for key, recs in (("en/dev", DEV), ("xx", TEST), ("yy", TEST_X)):
        lines = (out / results["predictions"][key]).read_text().splitlines()
        rows = [json.loads(line) for line in lines]
        assert [r["id"] for r in rows] == [r.id for r in recs]
        assert [r["gold"] for r in rows] == [r.tags for r in recs]
        assert all(len(r["prediction"]) == len(r["gold"]) for r in rows)
        right = sum(p == g for r in rows for p, g in zip(r["prediction"], r["gold"], strict=True))
        words = sum(len(r["gold"]) for r in rows)
        assert results["scores"][key]["accuracy"] == pytest.approx(100 * right / words)
    assert results["model"] == "model"
    config = json.loads((out / "model" / "config.json").read_text())
    assert sorted(config["id2label"].values()) == results["labels"]
    assert results["labels"] == ["ADV", "CONJ", "DET", "NOUN", "VERB"]
    assert (out / "model" / "tokenizer.json").is_file()
    assert results["device"] == "cpu" and results["precision"] == "fp32"


def test_unseen_test_labels_are_counted_and_scored_wrong(reference) -> None:
    results, _ = reference
    n_x = sum(r.tags.count("X") for r in TEST_X)
    assert n_x > 0
    assert results["counts"]["yy"]["unseen_label_words"] == n_x
    assert results["counts"]["yy"]["unseen_label_words[X]"] == n_x
    assert "unseen_label_words" not in results["counts"]["xx"]
    words = sum(len(r.tags) for r in TEST_X)
    assert results["scores"]["yy"]["accuracy"] <= 100 * (words - n_x) / words


def test_same_seed_same_result_other_seed_other_result(
    encoder: Path, reference, tmp_path: Path
) -> None:
    results, root = reference
    again = run(encoder, tmp_path / "a", keep_model=False)
    assert losses(again) == losses(results)
    assert again["scores"] == results["scores"]
    for name in ("en.dev", "xx"):
        path = f"out/predictions/{name}.jsonl"
        assert (tmp_path / "a" / path).read_text() == (root / path).read_text()
    assert again["model"] is None and not (tmp_path / "a" / "out" / "model").exists()
    other = run(encoder, tmp_path / "b", seed=2, keep_model=False)
    assert losses(other)[0] != losses(results)[0]


class Kill(TrainerCallback):
    """Raises at the end of a step, as if the job had been killed there."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if state.global_step == self.step:
            raise KeyboardInterrupt(f"killed at step {self.step}")


@pytest.mark.parametrize("grouped", [False, True], ids=["random", "group_by_length"])
def test_a_killed_run_resumes_to_the_same_result(
    encoder: Path, reference, tmp_path: Path, grouped: bool
) -> None:
    params = PARAMS
    if grouped:
        params = dataclasses.replace(PARAMS, extra={"group_by_length": True})
        results = run(encoder, tmp_path / "uninterrupted", params=params, keep_model=False)
    else:
        results = reference[0]
    with pytest.raises(KeyboardInterrupt):
        run(encoder, tmp_path, params=params, keep_model=False, callbacks=[Kill(25)])
    assert last_checkpoint(tmp_path / "work" / CHECKPOINTS).name == "checkpoint-20"
    assert not (tmp_path / "out" / "results.json").exists()
    resumed = run(encoder, tmp_path, params=params, keep_model=False)
    assert resumed["resumed_from_step"] == 20
    assert losses(resumed) == losses(results)
    assert resumed["scores"] == results["scores"]
    assert resumed["selection"] == results["selection"]
    assert not (tmp_path / "work").exists()


def test_a_run_killed_after_training_does_not_train_again(
    encoder: Path, reference, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = TaggingTask.decode

    def dies_on_the_test_set(self, outputs, encoded, records, *args):
        if records[0].id.startswith("te"):
            raise KeyboardInterrupt("killed while predicting")
        return original(self, outputs, encoded, records, *args)

    monkeypatch.setattr(TaggingTask, "decode", dies_on_the_test_set)
    with pytest.raises(KeyboardInterrupt):
        run(encoder, tmp_path, keep_model=False)
    monkeypatch.setattr(TaggingTask, "decode", original)
    resumed = run(encoder, tmp_path, keep_model=False)
    assert resumed["resumed_from_step"] == STEPS
    assert resumed["scores"] == reference[0]["scores"]
    assert resumed["selection"] == reference[0]["selection"]


def test_final_selection_keeps_the_last_checkpoint(encoder: Path, tmp_path: Path) -> None:
    params = dataclasses.replace(PARAMS, selection="final", epochs=1)
    results = run(encoder, tmp_path, params=params, keep_model=False)
    assert results["selection"]["step"] == results["steps"] == 13
    assert results["selection"]["metric"] is None
    assert results["learning_curve"]["dev"] == []  # no evaluation during training
    assert set(results["scores"]) == {"en/dev", "xx", "yy"}


def test_bad_arguments_fail_before_training(encoder: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="clashes"):
        finetune(
            TaggingTask("pos"), encoder=encoder, train=TRAIN, dev=DEV,
            tests={"en/dev": TEST}, params=PARAMS, seed=1,
            output_dir=tmp_path / "o", work_dir=tmp_path / "w",
        )  # fmt: skip
    with pytest.raises(ConfigError, match="multiple"):
        _per_device_batch(TaskParams(batch_size=32, gradient_accumulation=3), 1)
    assert _per_device_batch(TaskParams(batch_size=32, gradient_accumulation=2), 2) == 8


# --------------------------------------------------------------------------- helpers


def test_evaluation_order_is_longest_first_and_restored() -> None:
    feats = [{"input_ids": [0] * n} for n in (3, 5, 1, 5)]
    order = longest_first(feats)
    assert order == [1, 3, 0, 2]  # stable among equals
    # outputs over the sorted features, padded with -100 as the Trainer does
    sorted_out = np.array([[1, 1, 1, 1, 1], [3, 3, 3, 3, 3], [0, 0, 0, -100, -100],
                           [2, -100, -100, -100, -100]])  # fmt: skip
    restored = restore_order((sorted_out, np.array([10, 30, 0, 20])), order)
    assert restored[0][:, 0].tolist() == [0, 1, 2, 3]
    assert restored[1].tolist() == [0, 10, 20, 30]
    with pytest.raises(ValueError):
        restore_order(np.zeros(3), order)


def test_length_grouped_sampler_is_a_seeded_permutation_of_sorted_pools() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 100, size=103).tolist()
    s = LengthGroupedSampler(lengths, pool=20, seed=7)
    first = list(s)
    assert sorted(first) == list(range(103))
    assert list(s) == first  # same epoch, same order
    assert list(LengthGroupedSampler(lengths, pool=20, seed=7)) == first
    s.set_epoch(1)
    assert list(s) != first
    pools = [first[i : i + 20] for i in range(0, 103, 20)]
    for pool in pools:
        ls = [lengths[i] for i in pool]
        assert ls == sorted(ls, reverse=True)
    assert lengths[first[0]] == max(lengths)


def test_precision_follows_the_device() -> None:
    import torch

    cpu = torch.device("cpu")
    assert resolve_precision("auto", cpu) == "fp32"
    assert resolve_precision("bf16", cpu) == "bf16"
    with pytest.raises(ConfigError, match="GPU"):
        resolve_precision("fp16", cpu)
    with pytest.raises(ConfigError):
        resolve_precision("fp8", cpu)


def test_work_dir_keeps_only_complete_checkpoints_of_the_same_run(tmp_path: Path) -> None:
    ckpts = tmp_path / CHECKPOINTS
    for step, complete in ((10, True), (20, True), (30, False)):
        d = ckpts / f"checkpoint-{step}"
        d.mkdir(parents=True)
        if complete:
            (d / "trainer_state.json").write_text("{}")
    write_json(tmp_path / FINGERPRINT, {"fingerprint": "abc"})
    assert last_checkpoint(ckpts).name == "checkpoint-20"
    _prepare_work_dir(tmp_path, "abc", is_main=True)
    assert sorted(p.name for p in ckpts.iterdir()) == ["checkpoint-10", "checkpoint-20"]
    _prepare_work_dir(tmp_path, "other", is_main=True)  # another run's checkpoints
    assert not ckpts.exists() and last_checkpoint(ckpts) is None
    # the new run's fingerprint comes with its first checkpoint, not before
    assert json.loads((tmp_path / FINGERPRINT).read_text()) == {"fingerprint": "abc"}
    _stamp_work_dir(tmp_path, "other")
    assert json.loads((tmp_path / FINGERPRINT).read_text()) == {"fingerprint": "other"}
