"""Fine-tuning killed part-way, as a job: SIGKILL loses the steps since the last periodic
checkpoint, SIGTERM has the Trainer save a checkpoint of the step in progress and the job
exit 143; the re-run resumes from it and ends with the learning curve, selection, scores
and predictions of an uninterrupted run, and the kill leaves nothing finished-looking. A
checkpoint file that would run code when unpickled is refused before the Trainer reads
it."""

from __future__ import annotations

import dataclasses
import json
import signal
from pathlib import Path
from typing import Any

import pytest
import resume
import torch
from test_finetune import PARAMS, losses, run
from tiny_encoder import make_tiny_encoder
from transformers import TrainerCallback

from xlalign.core.errors import InputError
from xlalign.evaluation.tasks.finetune import CHECKPOINTS, last_checkpoint

pytestmark = pytest.mark.usefixtures("one_torch_thread")

#: one epoch of 13 steps, checkpoints (and dev evaluations) every 4, the loss logged every
#: 5 (run()'s log_every): a SIGTERM checkpoint between two log entries has a loss pending
SHORT = dataclasses.replace(PARAMS, epochs=1, eval_every=4)
STEPS = 13

_CHILD = """
import dataclasses, time
from pathlib import Path
from transformers import TrainerCallback
from test_finetune import PARAMS, run

root = Path(ARGS["root"])
first = root / "work" / "checkpoints" / "checkpoint-4" / "trainer_state.json"

class Slow(TrainerCallback):
    def on_step_end(self, args, state, control, **kw):
        if first.exists():  # after the first periodic checkpoint: time for the signal
            time.sleep(0.3)

params = dataclasses.replace(PARAMS, epochs=1, eval_every=4)
run(Path(ARGS["encoder"]), root, params=params, keep_model=False, callbacks=[Slow()])
"""


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_finetune import LEX

    words = [w for ws in LEX.values() for w in ws] + ["and", "fly"]
    return make_tiny_encoder(tmp_path_factory.mktemp("tiny") / "enc", words)


@pytest.fixture(scope="module")
def straight(encoder: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    root = tmp_path_factory.mktemp("straight")
    return run(encoder, root, params=SHORT, keep_model=False), root


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killed_job_resumes_to_the_uninterrupted_result(
    encoder: Path, straight: tuple[dict, Path], tmp_path: Path, sig: int
) -> None:
    ckpts = tmp_path / "work" / CHECKPOINTS
    first = ckpts / "checkpoint-4" / "trainer_state.json"
    stopped = resume.run_and_stop(
        _CHILD,
        {"root": str(tmp_path), "encoder": str(encoder)},
        tmp_path,
        sig,
        ready=resume.exists_for(first, 0.5),  # checkpoint-4 complete, then two slowed steps
        paths=[Path(__file__).parent],
        timeout=240,
    )
    assert stopped.returncode == resume.expect_exit(sig), stopped.log[-3000:]
    assert not (tmp_path / "out" / "results.json").exists()
    assert not list((tmp_path / "out").glob("predictions/*.jsonl"))
    assert not [p for p in resume.leftover_temporaries(tmp_path) if "checkpoint-" not in str(p)]
    step = int(last_checkpoint(ckpts).name.rsplit("-", 1)[-1])
    if sig == signal.SIGTERM:
        # saved on the way out, at the step in progress: later than the periodic one
        assert 4 < step < STEPS and step % 4, step
        assert "SIGTERM" in (tmp_path / "job.log").read_text()
    else:
        assert step in (4, 8)
    resumed = run(encoder, tmp_path, params=SHORT, keep_model=False)
    assert resumed["resumed_from_step"] == step
    reference, root = straight
    assert losses(resumed) == losses(reference)
    assert resumed["learning_curve"]["train"] == reference["learning_curve"]["train"]
    assert resumed["selection"] == reference["selection"]
    assert resumed["scores"] == reference["scores"]
    for name in ("en.dev", "xx", "yy"):
        path = f"out/predictions/{name}.jsonl"
        assert (tmp_path / path).read_text() == (root / path).read_text()
    assert not (tmp_path / "work").exists()
    assert not resume.leftover_temporaries(tmp_path)


class _Stop(TrainerCallback):
    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if state.global_step == 6:
            raise KeyboardInterrupt("killed")


class _Plant:
    """Unpickling this runs ``open(marker, "w")``: what a malicious checkpoint does."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.marker, "w"))


def test_a_planted_checkpoint_file_is_refused_and_runs_nothing(
    encoder: Path, tmp_path: Path
) -> None:
    with pytest.raises(KeyboardInterrupt):
        run(encoder, tmp_path, params=SHORT, keep_model=False, callbacks=[_Stop()])
    ckpt = last_checkpoint(tmp_path / "work" / CHECKPOINTS)
    assert ckpt is not None and ckpt.name == "checkpoint-4"
    marker = tmp_path / "pwned"
    torch.save({"python": _Plant(marker)}, ckpt / "rng_state.pth")
    with pytest.raises(InputError, match=r"rng_state\.pth: .*weights only"):
        run(encoder, tmp_path, params=SHORT, keep_model=False)
    assert not marker.exists()
    assert not (tmp_path / "out" / "results.json").exists()
    assert json.loads((ckpt / "trainer_state.json").read_text())["global_step"] == 4


class _Sigterm(TrainerCallback):
    """Sends this process SIGTERM at the end of step ``step`` (a scheduler's pre-emption)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if state.global_step == self.step:
            import os

            os.kill(os.getpid(), signal.SIGTERM)


def test_continual_run_stopped_between_log_entries_logs_what_an_uninterrupted_one_logs(
    encoder: Path, tmp_path: Path
) -> None:
    """In this process: SIGTERM at step 5 of 12 (losses logged every 3 steps, checkpoints
    every 4): checkpoint-5 holds the task and alignment losses summed since step 3, and the
    resumed run's log entries are the uninterrupted run's."""
    from test_continual import DEV_S, TEST_S, TRAIN_S, cl
    from test_continual import PARAMS as CPARAMS

    from xlalign.core import interrupt
    from xlalign.evaluation.tasks.finetune import finetune
    from xlalign.evaluation.tasks.tagging import TaggingTask

    def go(root: Path, **kw: Any) -> dict[str, Any]:
        return finetune(
            TaggingTask("pos"),
            encoder=encoder,
            train=TRAIN_S,
            dev=DEV_S,
            tests={"xx": TEST_S},
            params=CPARAMS,
            seed=1,
            output_dir=root / "out",
            work_dir=root / "work",
            log_every=3,
            progress=False,
            continual=cl(encoder),
            keep_model=False,
            **kw,
        )

    reference = go(tmp_path / "straight")
    try:
        with pytest.raises(interrupt.Preempted):
            go(tmp_path / "stopped", callbacks=[_Sigterm(5)])
    finally:
        interrupt.reset()
    assert last_checkpoint(tmp_path / "stopped" / "work" / CHECKPOINTS).name == "checkpoint-5"
    resumed = go(tmp_path / "stopped")
    assert resumed["resumed_from_step"] == 5
    train = resumed["learning_curve"]["train"]
    assert [p["step"] for p in train] == [3, 6, 9, 12]
    assert train == reference["learning_curve"]["train"]
    assert resumed["scores"] == reference["scores"]
