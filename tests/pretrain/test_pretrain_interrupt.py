"""Continued pre-training killed part-way, as a job: SIGKILL loses the steps since the
last periodic checkpoint, SIGTERM writes a checkpoint of the step in progress and exits
143; either way the re-run resumes and ends with the weights, selection and learning
curve of an uninterrupted run, and nothing finished-looking is left by the kill. A
checkpoint that would run code when unpickled is refused, and the code never runs."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
import resume
import torch
from pretrain_world import read_history
from test_pretrain_trainer import SETTINGS, train_row

from xlalign.core.errors import InputError

ROW = "x2s-ma-dcca"
#: periodic checkpoints every 8 steps (SETTINGS), 24 steps in all
PERIODIC = SETTINGS["eval_every"]

_CHILD = """
import time
from pathlib import Path
from test_pretrain_trainer import train_row

root = Path(ARGS["root"])
ckpt = root / (ARGS["row"] + ".work") / "checkpoint.pt"

def slow(step):
    if ckpt.exists():  # after the first periodic checkpoint: time for the signal
        time.sleep(0.3)

train_row(ARGS["world"], root, ARGS["row"], static="static7", on_step=slow)
"""


@pytest.fixture(scope="module")
def straight(pt_world: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("straight")
    train_row(pt_world, root, ROW, static="static7")
    return root


def _same_output(a: Path, b: Path) -> None:
    from safetensors.torch import load_file

    x, y = load_file(a / ROW / "model.safetensors"), load_file(b / ROW / "model.safetensors")
    assert x.keys() == y.keys()
    for k in x:
        assert torch.equal(x[k], y[k]), k
    sa, sb = (
        json.loads((a / f"{ROW}.json").read_text()),
        json.loads((b / f"{ROW}.json").read_text()),
    )
    assert sa["selection"] == sb["selection"]
    assert read_history(a / f"{ROW}.json") == read_history(b / f"{ROW}.json")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killed_job_resumes_to_the_uninterrupted_output(
    pt_world: dict[str, Any], straight: Path, tmp_path: Path, sig: int
) -> None:
    world = {k: (str(v) if isinstance(v, Path) else v) for k, v in pt_world.items()}
    ckpt = tmp_path / f"{ROW}.work" / "checkpoint.pt"
    stopped = resume.run_and_stop(
        _CHILD,
        {"world": world, "root": str(tmp_path), "row": ROW, "threads": None},
        tmp_path,
        sig,
        ready=resume.exists_for(ckpt, 0.5),
        paths=[Path(__file__).parent],
        timeout=240,
    )
    assert stopped.returncode == resume.expect_exit(sig), stopped.log[-3000:]
    # nothing that looks finished, no temporary beside the outputs
    assert not (tmp_path / ROW).exists() and not (tmp_path / f"{ROW}.json").exists()
    assert not resume.leftover_temporaries(tmp_path / ROW) and not [
        p for p in resume.leftover_temporaries(tmp_path) if p.parent == tmp_path
    ]
    step = torch.load(ckpt, weights_only=True)["step"]
    if sig == signal.SIGTERM:
        # written on the way out, at the step in progress: later than the periodic one
        assert PERIODIC < step < SETTINGS["steps"] and step % PERIODIC, step
        assert "SIGTERM" in (tmp_path / "job.log").read_text()
    else:
        assert step == PERIODIC
    resumed = train_row(pt_world, tmp_path, ROW, static="static7")
    assert resumed["resumed_from_step"] == step
    _same_output(tmp_path, straight)
    assert not (tmp_path / f"{ROW}.work").exists()
    assert not resume.leftover_temporaries(tmp_path)


class _Plant:
    """Unpickling this runs ``open(marker, "w")``: what a malicious checkpoint does."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.marker, "w"))


def test_a_planted_checkpoint_is_refused_and_runs_nothing(
    pt_world: dict[str, Any], tmp_path: Path
) -> None:
    """A checkpoint.pt holding a pickled call, beside this very run's fingerprint stamp
    (as a shared or copied work directory would have it): refused, naming the file; the
    call never runs."""
    settings = {"steps": 6, "eval_every": 2}

    def stop(step: int) -> None:
        if step == 3:
            raise KeyboardInterrupt("killed")

    with pytest.raises(KeyboardInterrupt):
        train_row(pt_world, tmp_path, "mlm", settings=settings, on_step=stop)
    ckpt = tmp_path / "mlm.work" / "checkpoint.pt"
    assert torch.load(ckpt, weights_only=True)["step"] == 2
    marker = tmp_path / "pwned"
    real = torch.load(ckpt, weights_only=True)
    torch.save({**real, "joint": _Plant(marker)}, ckpt)
    with pytest.raises(InputError, match=r"checkpoint\.pt: .*weights only"):
        train_row(pt_world, tmp_path, "mlm", settings=settings)
    assert not marker.exists()
    assert not (tmp_path / "mlm").exists()
    # readable, this run's fingerprint, but not what the trainer writes
    torch.save({"fingerprint": real["fingerprint"], "step": 2}, ckpt)
    with pytest.raises(InputError, match=r"checkpoint\.pt: not a pre-training checkpoint.*'joint'"):
        train_row(pt_world, tmp_path, "mlm", settings=settings)
