"""When fine-tuning writes resume checkpoints, and model selection in memory.

A run shorter than ``checkpoint_minutes`` writes no checkpoint at all (and a kill then
costs the run, nothing else); at every evaluation (interval 0) only the latest checkpoint
is kept and it carries the best weights when they are not its own, so that a killed and
resumed run selects the step, and writes the predictions, of an uninterrupted one; the
selection in memory picks and restores what the Trainer's old on-disk selection
(``load_best_model_at_end``, restated here as a callback) did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file, save_file
from test_finetune import (
    DEV,
    PARAMS,
    STEPS,
    TEST,
    TEST_X,
    TRAIN,
    Kill,
    losses,
)
from tiny_encoder import make_tiny_encoder
from transformers import TrainerCallback

from xlalign.core.errors import InputError
from xlalign.evaluation.tasks.finetune import (
    CHECKPOINTS,
    BestWeights,
    finetune,
)
from xlalign.evaluation.tasks.tagging import TaggingTask

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class EarlyBest(TaggingTask):
    """POS selected on the word error rate (higher is "better"): the model improves, so
    the best evaluation is an early one and the selected weights are not the last."""

    selection_metric = "error"

    def score(self, predictions: Any, records: Any, *, lang: str) -> dict[str, Any]:
        scores = super().score(predictions, records, lang=lang)
        return {**scores, "error": 100.0 - scores["accuracy"]}


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_finetune import LEX

    words = [w for ws in LEX.values() for w in ws] + ["and", "fly"]
    return make_tiny_encoder(tmp_path_factory.mktemp("tiny") / "enc", words)


def go(encoder: Path, root: Path, task: TaggingTask | None = None, **kw: Any) -> dict[str, Any]:
    return finetune(
        task or EarlyBest("pos"),
        encoder=encoder,
        train=TRAIN,
        dev=DEV,
        tests={"xx": TEST, "yy": TEST_X},
        params=PARAMS,
        seed=1,
        output_dir=root / "out",
        work_dir=root / "work",
        log_every=5,
        progress=False,
        **kw,
    )


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else []


class WorkDirSpy(TrainerCallback):
    """Lists the work dir at every step end, evaluation, save and at the end of training."""

    def __init__(self, work_dir: Path) -> None:
        self.work_dir = work_dir
        self.seen: set[str] = set()

    def _look(self) -> None:
        self.seen.update(files_under(self.work_dir))

    def on_step_end(self, *a: Any, **kw: Any) -> None:
        self._look()

    def on_evaluate(self, *a: Any, **kw: Any) -> None:
        self._look()

    def on_save(self, *a: Any, **kw: Any) -> None:
        self._look()

    def on_train_end(self, *a: Any, **kw: Any) -> None:
        self._look()


@pytest.fixture(scope="module")
def straight(encoder: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    """The uninterrupted run (selection on the error rate), no checkpoints."""
    root = tmp_path_factory.mktemp("straight")
    spy = WorkDirSpy(root / "work")
    results = go(encoder, root, checkpoint_minutes=60, keep_model=False, callbacks=[spy])
    assert not spy.seen  # a run shorter than the interval writes nothing there
    return results, root


def test_a_run_shorter_than_the_interval_writes_no_checkpoint(straight) -> None:
    results, root = straight
    assert results["steps"] == STEPS
    assert not (root / "work").exists()
    # the outputs: predictions and results, no model (keep_model=False)
    assert files_under(root / "out") == [
        "predictions",
        "predictions/en.dev.jsonl",
        "predictions/xx.jsonl",
        "predictions/yy.jsonl",
        "results.json",
    ]
    # the best evaluation is an early one, restored from memory
    sel = results["selection"]
    assert sel["step"] < STEPS and sel["metric"] == "error"


def test_a_kill_before_the_interval_leaves_nothing_and_the_rerun_starts_afresh(
    encoder: Path, straight, tmp_path: Path
) -> None:
    with pytest.raises(KeyboardInterrupt):
        go(encoder, tmp_path, checkpoint_minutes=60, keep_model=False, callbacks=[Kill(35)])
    assert files_under(tmp_path / "work") == []
    again = go(encoder, tmp_path, checkpoint_minutes=60, keep_model=False)
    assert again["resumed_from_step"] is None
    assert again["selection"] == straight[0]["selection"]
    assert again["scores"] == straight[0]["scores"]


def test_killed_and_resumed_run_selects_the_early_best_of_an_uninterrupted_one(
    encoder: Path, straight, tmp_path: Path
) -> None:
    reference, root = straight
    spy = WorkDirSpy(tmp_path / "work")
    with pytest.raises(KeyboardInterrupt):
        go(encoder, tmp_path, checkpoint_minutes=0, keep_model=False, callbacks=[Kill(35), spy])
    # a checkpoint at each evaluation (10, 20, 30), only the latest kept
    assert {s.split("/")[1] for s in spy.seen if s.count("/") >= 1 and "checkpoint-" in s} == {
        "checkpoint-10",
        "checkpoint-20",
        "checkpoint-30",
    }
    ckpts = tmp_path / "work" / CHECKPOINTS
    assert [p.name for p in ckpts.iterdir()] == ["checkpoint-30"]
    ckpt = ckpts / "checkpoint-30"
    selected = reference["selection"]["step"]
    assert selected in (10, 20)  # the precondition of this test: an earlier best
    saved = json.loads((ckpt / "xlalign-selection.json").read_text())
    assert saved["step"] == selected and saved["weights"] == "xlalign-best.safetensors"
    assert saved["value"] == reference["selection"]["value"]
    # no tokenizer, no pickled arguments: what a resume reads, nothing else
    assert not (ckpt / "training_args.bin").exists()
    assert not list(ckpt.glob("tokenizer*")) and not (ckpt / "special_tokens_map.json").exists()
    best = load_file(ckpt / "xlalign-best.safetensors")
    last = load_file(ckpt / "model.safetensors")
    assert any(not torch.equal(t, last[k]) for k, t in best.items() if k in last)

    resumed = go(encoder, tmp_path, checkpoint_minutes=0, keep_model=False)
    assert resumed["resumed_from_step"] == 30
    assert resumed["selection"] == reference["selection"]
    assert losses(resumed) == losses(reference)
    assert resumed["scores"] == reference["scores"]
    for name in ("en.dev", "xx", "yy"):
        path = f"out/predictions/{name}.jsonl"
        assert (tmp_path / path).read_text() == (root / path).read_text()
    assert not (tmp_path / "work").exists()


class OnDiskSelection(TrainerCallback):
    """The Trainer's old ``load_best_model_at_end``, restated: at each dev evaluation whose
    score is strictly greater than the best so far, the weights go to disk; at the end of
    training the best ones are loaded back from there."""

    def __init__(self, where: Path, metric: str) -> None:
        self.where = where
        self.metric = f"eval_{metric}"
        self.best: tuple[int, float] | None = None
        self.scores: list[tuple[int, float]] = []

    def on_evaluate(self, args: Any, state: Any, control: Any, metrics: Any = None, **kw: Any):
        value = float(metrics[self.metric])
        self.scores.append((state.global_step, value))
        if self.best is None or value > self.best[1]:
            self.best = (state.global_step, value)
            state_dict = {
                k: v.detach().clone().contiguous() for k, v in kw["model"].state_dict().items()
            }
            save_file(state_dict, str(self.where))

    def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        kw["model"].load_state_dict(load_file(str(self.where)))


@pytest.mark.parametrize("task", [EarlyBest("pos"), TaggingTask("pos")], ids=["early", "f1"])
def test_selection_in_memory_is_the_on_disk_selection(
    encoder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: TaggingTask
) -> None:
    ours = go(encoder, tmp_path / "memory", task, keep_model=True)
    monkeypatch.setattr(BestWeights, "restore", lambda self, model: None)
    old = OnDiskSelection(tmp_path / "best.safetensors", task.selection_metric)
    theirs = go(encoder, tmp_path / "disk", task, keep_model=True, callbacks=[old])
    assert old.best is not None
    step, value = old.best
    assert [s for s, _ in old.scores] == [10, 20, 30, STEPS]
    assert value == max(v for _, v in old.scores)
    assert (ours["selection"]["step"], ours["selection"]["value"]) == (step, value)
    assert ours["selection"] == theirs["selection"]
    assert ours["scores"] == theirs["scores"]
    for name in ("en.dev", "xx", "yy"):
        path = f"out/predictions/{name}.jsonl"
        assert (tmp_path / "memory" / path).read_text() == (tmp_path / "disk" / path).read_text()
    a = load_file(tmp_path / "memory" / "out" / "model" / "model.safetensors")
    b = load_file(tmp_path / "best.safetensors")
    for k in a:
        assert torch.equal(a[k], b[k]), k
    # the kept model: what the analyses load as an encoder, no pickled arguments
    kept = set(files_under(tmp_path / "memory" / "out" / "model"))
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= kept
    assert "training_args.bin" not in kept


class _Tied(torch.nn.Module):
    """Tied input and output embeddings, a frozen projection and a buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(5, 3)
        self.out = torch.nn.Linear(3, 5, bias=False)
        self.out.weight = self.emb.weight
        self.frozen = torch.nn.Linear(3, 3)
        self.frozen.requires_grad_(False)
        self.register_buffer("count", torch.zeros(()))


def test_best_weights_keep_the_first_best_and_restore_it(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = _Tied()
    best = BestWeights()
    snapshots = {}
    for step, value in ((1, 1.0), (2, 3.0), (3, 3.0), (4, float("nan")), (5, 2.0)):
        with torch.no_grad():
            model.emb.weight.add_(1.0)
            model.count.add_(1)
        snapshots[step] = {k: v.clone() for k, v in model.state_dict().items()}
        best.observe(step, value, model)
    assert (best.step, best.value) == (2, 3.0)  # a tie and NaN never replace the best
    frozen_before = model.frozen.weight.clone()
    # the tied weight is copied once, the frozen projection not at all
    assert sorted(best._tensors) == ["count", "emb.weight"]
    best.save(tmp_path / "best.safetensors")
    best.restore(model)
    for k, v in model.state_dict().items():
        assert torch.equal(v, snapshots[2][k]), k
    assert model.out.weight is model.emb.weight  # still tied
    assert torch.equal(model.frozen.weight, frozen_before)

    again = BestWeights()
    fresh = _Tied()
    fresh.load_state_dict(snapshots[5])
    again.load(tmp_path / "best.safetensors", fresh, step=2, value=3.0)
    again.restore(fresh)
    for k, v in fresh.state_dict().items():
        assert torch.equal(v, snapshots[2][k]), k
    with pytest.raises(InputError, match=r"best\.safetensors: not this model's weights"):
        BestWeights().load(tmp_path / "best.safetensors", torch.nn.Linear(2, 2), step=2, value=3)
    with pytest.raises(InputError, match=r"missing\.safetensors: the selected weights"):
        BestWeights().load(tmp_path / "missing.safetensors", fresh, step=2, value=3)
