"""What continued pre-training writes for model selection and resuming: the best weights
are kept in memory (nothing on disk for selection), a resume checkpoint only when the
checkpoint clock is due (never within a run shorter than the interval) or on SIGTERM,
carrying the best weights only when they are not the current ones; a run resumed from
such a checkpoint ends as an uninterrupted one."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from pretrain_world import read_history
from test_pretrain_trainer import train_row

from xlalign.core import interrupt
from xlalign.core.errors import InputError
from xlalign.pretrain import trainer

ROW = "mlm"
#: 24 steps, evaluations at 8, 16, 24 (test_pretrain_trainer.SETTINGS)
EVALS = (0, 8, 16, 24)
LONG = 24 * 60.0  # minutes: far longer than any of these runs


def _output(root: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(root / ROW / "model.safetensors")


def _same_run(a: Path, b: Path) -> None:
    """The same output weights, selection and learning curve."""
    x, y = _output(a), _output(b)
    assert x.keys() == y.keys()
    for k in x:
        assert torch.equal(x[k], y[k]), k
    ra, rb = (json.loads((r / f"{ROW}.json").read_text()) for r in (a, b))
    assert ra["selection"] == rb["selection"]
    assert read_history(a / f"{ROW}.json") == read_history(b / f"{ROW}.json")


class _Scripted:
    """Stands in for ``trainer.validation_loss``: the loss of each evaluation's step from
    ``losses`` (so the best step is known in advance), and a CPU copy of the weights the
    model had there. The step is the one after the last completed step (``on_step``)."""

    def __init__(self, losses: dict[int, float]) -> None:
        self.losses = losses
        self.next_step = 0
        self.weights: dict[int, dict[str, torch.Tensor]] = {}

    def on_step(self, done: int) -> None:
        self.next_step = done + 1

    def __call__(self, model: Any, *args: Any) -> float:
        step = self.next_step
        self.weights[step] = {k: v.detach().clone() for k, v in model.state_dict().items()}
        return self.losses[step]


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[int, float]], _Scripted]:
    def install(losses: dict[int, float]) -> _Scripted:
        s = _Scripted(losses)
        monkeypatch.setattr(trainer, "validation_loss", s)
        return s

    return install


def _restated_selection(losses: dict[int, float]) -> int:
    """The selection rule restated: the lowest validation loss after step 0, the earliest
    of equal ones."""
    return min((s for s in losses if s > 0), key=lambda s: (losses[s], s))


def test_a_run_shorter_than_the_interval_writes_no_checkpoint(
    pt_world: dict[str, Any], tmp_path: Path
) -> None:
    work = tmp_path / f"{ROW}.work"
    seen: list[tuple[int, list[str]]] = []

    def look(step: int) -> None:
        seen.append((step, sorted(p.name for p in work.iterdir())))

    res = train_row(pt_world, tmp_path, ROW, checkpoint_minutes=LONG, on_step=look)
    assert [s for s, _ in seen] == list(range(1, 25))
    written = {name for _, names in seen for name in names}
    assert trainer.CHECKPOINT not in written and trainer.BEST not in written, written
    assert not [n for n in written if n.endswith(".pt") or ".tmp" in n], written
    assert res["selection"]["step"] in EVALS[1:]
    assert not work.exists()  # removed on success


def test_sigterm_within_the_interval_still_checkpoints_and_resumes(
    pt_world: dict[str, Any], tmp_path: Path
) -> None:
    """SIGTERM at an evaluation step whose clock is not due: the checkpoint of that step
    is written on the way out (without separate best weights: they are the current
    ones), and the rerun ends as an uninterrupted run."""

    def term(step: int) -> None:
        if step == 8:
            os.kill(os.getpid(), signal.SIGTERM)

    try:
        with pytest.raises(interrupt.Preempted):
            train_row(pt_world, tmp_path, ROW, checkpoint_minutes=LONG, on_step=term)
    finally:
        interrupt.reset()
    state = torch.load(tmp_path / f"{ROW}.work" / trainer.CHECKPOINT, weights_only=True)
    assert state["step"] == 8 and state["best"]["step"] == 8
    assert trainer.BEST_WEIGHTS not in state
    assert not (tmp_path / f"{ROW}.work" / trainer.BEST).exists()
    assert not (tmp_path / ROW).exists()
    resumed = train_row(pt_world, tmp_path, ROW, checkpoint_minutes=LONG)
    assert resumed["resumed_from_step"] == 8
    straight = tmp_path / "straight"
    straight.mkdir()
    train_row(pt_world, straight, ROW, checkpoint_minutes=LONG)
    _same_run(tmp_path, straight)


def test_resume_where_the_best_is_not_the_latest_equals_an_uninterrupted_run(
    pt_world: dict[str, Any],
    tmp_path: Path,
    scripted: Callable[[dict[int, float]], _Scripted],
) -> None:
    """Interval 0 (a checkpoint at every evaluation), the best at step 8, killed at step
    18: the checkpoint of step 16 carries step 8's weights, step 8's did not carry
    separate ones, and the resumed run writes the model and record of an uninterrupted
    one."""
    losses = {0: 9.0, 8: 1.0, 16: 2.0, 24: 3.0}
    killed = tmp_path / "killed"
    killed.mkdir()
    ckpt = killed / f"{ROW}.work" / trainer.CHECKPOINT
    seen: dict[int, dict[str, Any]] = {}
    s = scripted(losses)

    def kill(step: int) -> None:
        s.on_step(step)
        if step in (8, 16):
            seen[step] = torch.load(ckpt, weights_only=True)
        if step == 18:
            raise KeyboardInterrupt("killed")  # as SIGKILL: nothing written on the way out

    with pytest.raises(KeyboardInterrupt):
        train_row(pt_world, killed, ROW, on_step=kill)
    assert trainer.BEST_WEIGHTS not in seen[8] and seen[8]["best"]["step"] == 8
    state = torch.load(ckpt, weights_only=True)
    assert state["step"] == 16 and state["best"] == {"step": 8, "loss": 1.0}
    best = state[trainer.BEST_WEIGHTS]
    for k, v in s.weights[8].items():
        assert torch.equal(best[k], v), k
    assert not (killed / f"{ROW}.work" / trainer.BEST).exists()

    s = scripted(losses)
    resumed = train_row(pt_world, killed, ROW, on_step=s.on_step)
    assert resumed["resumed_from_step"] == 16
    assert resumed["selection"] == {"mode": "validation_mlm_loss", "step": 8, "valid_mlm_loss": 1.0}
    straight = tmp_path / "straight"
    straight.mkdir()
    s = scripted(losses)
    train_row(pt_world, straight, ROW, on_step=s.on_step)
    _same_run(killed, straight)
    out = _output(straight)
    assert all(torch.equal(out[k], s.weights[8][k]) for k in out)  # step 8's weights


def test_a_checkpoint_of_an_earlier_version_resumes_with_its_best_pt(
    pt_world: dict[str, Any],
    tmp_path: Path,
    scripted: Callable[[dict[int, float]], _Scripted],
) -> None:
    """Earlier versions wrote the best weights to best.pt beside a checkpoint without
    them: a resume reads them there; without best.pt the checkpoint is refused, naming it."""
    losses = {0: 9.0, 8: 1.0, 16: 2.0, 24: 3.0}
    s = scripted(losses)

    def kill(step: int) -> None:
        s.on_step(step)
        if step == 18:
            raise KeyboardInterrupt("killed")

    with pytest.raises(KeyboardInterrupt):
        train_row(pt_world, tmp_path, ROW, on_step=kill)
    work = tmp_path / f"{ROW}.work"
    state = torch.load(work / trainer.CHECKPOINT, weights_only=True)
    best = state.pop(trainer.BEST_WEIGHTS)
    torch.save(state, work / trainer.CHECKPOINT)
    with pytest.raises(InputError, match=r"checkpoint\.pt: the best weights \(step 8\)"):
        train_row(pt_world, tmp_path, ROW, on_step=scripted(losses).on_step)
    torch.save(best, work / trainer.BEST)
    s = scripted(losses)
    resumed = train_row(pt_world, tmp_path, ROW, on_step=s.on_step)
    assert resumed["resumed_from_step"] == 16 and resumed["selection"]["step"] == 8
    out = _output(tmp_path)
    assert all(torch.equal(out[k], best[k]) for k in out)


@pytest.mark.parametrize(
    "losses",
    [
        {0: 5.0, 8: 3.0, 16: 2.0, 24: 2.5},  # the middle one
        {0: 5.0, 8: 2.0, 16: 2.0, 24: 2.0},  # ties: the earliest
        {0: 0.5, 8: 3.0, 16: 4.0, 24: 3.5},  # step 0 is no candidate
        {0: 5.0, 8: 3.0, 16: 2.0, 24: 1.0},  # the last: the final weights themselves
    ],
    ids=["middle", "ties", "start-lowest", "last"],
)
def test_in_memory_selection_is_the_restated_rule(
    pt_world: dict[str, Any],
    tmp_path: Path,
    scripted: Callable[[dict[int, float]], _Scripted],
    losses: dict[int, float],
) -> None:
    s = scripted(losses)
    res = train_row(pt_world, tmp_path, ROW, checkpoint_minutes=LONG, on_step=s.on_step)
    step = _restated_selection(losses)
    assert res["selection"] == {
        "mode": "validation_mlm_loss",
        "step": step,
        "valid_mlm_loss": losses[step],
    }
    assert sorted(s.weights) == list(EVALS)
    out = _output(tmp_path)
    assert out.keys() <= s.weights[step].keys()
    for k in out:
        assert torch.equal(out[k], s.weights[step][k]), k
    if step != 24:  # not the final weights: the restoring did something
        assert any(not torch.equal(out[k], s.weights[24][k]) for k in out)


def test_cpu_copy_keeps_tied_tensors_tied_and_reuses_its_buffers() -> None:
    emb = torch.nn.Embedding(5, 3)
    head = torch.nn.Linear(3, 5, bias=False)
    head.weight = emb.weight  # tied, as an MLM head is to the input embeddings
    model = torch.nn.ModuleDict({"emb": emb, "head": head})
    copy = trainer.cpu_copy(model.state_dict())
    assert copy["emb.weight"] is copy["head.weight"]
    assert copy["emb.weight"].data_ptr() != emb.weight.data_ptr()
    with torch.no_grad():
        emb.weight.add_(1.0)
    assert not torch.equal(copy["emb.weight"], emb.weight)  # a copy, not a view
    buffer = copy["emb.weight"]
    again = trainer.cpu_copy(model.state_dict(), into=copy)
    assert again is copy and again["emb.weight"] is buffer
    assert torch.equal(again["head.weight"], emb.weight)
