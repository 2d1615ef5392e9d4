"""Kill-and-resume helpers of the encoder stages' tests (pre-training, fine-tuning,
retrieval, derived and meta pre-training): run a job in a subprocess as a job script runs
it, wait until its checkpoint exists, send it SIGKILL or SIGTERM, and look for anything
finished-looking left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"


def child_script(body: str, *paths: Path) -> str:
    """Python source that puts the tests, ``paths`` and ``src/`` on ``sys.path`` and runs
    ``body`` (dedented)."""
    where = [str(p) for p in (*paths, TESTS, SRC)]
    return f"import sys\nsys.path[:0] = {where!r}\n" + textwrap.dedent(body)


def as_job(fn: Callable[[], Any], log_path: Path | str, threads: int | None = None) -> None:
    """Run ``fn`` as a workflow job script does (``xlalign.workflow.jobscript.job_logging``:
    SIGTERM handled, a pre-empted job exits 143), with ``threads`` torch threads (default:
    torch's own default, as the test process has them: float sums depend on it)."""
    import torch

    from xlalign.workflow.jobscript import job_logging

    n = threads or torch.get_num_threads()
    smk = SimpleNamespace(log=[str(log_path)], threads=n, rule="test", wildcards={})
    with job_logging(smk):
        fn()


def kill_when(
    script: str,
    ready: Callable[[], bool],
    sig: int,
    *,
    timeout: float = 240.0,
) -> tuple[int, str]:
    """Start ``python -c script``, wait until ``ready()`` (e.g. its checkpoint exists), send
    ``sig`` and wait for it to end. Returns (exit status, stderr); fails when the process
    ended by itself before it was ready."""
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stderr=subprocess.PIPE, text=True, env=env
    )
    deadline = time.monotonic() + timeout
    try:
        while not ready():
            if proc.poll() is not None:
                err = proc.stderr.read() if proc.stderr else ""
                raise AssertionError(
                    f"ended ({proc.returncode}) before it was ready:\n{err[-3000:]}"
                )
            if time.monotonic() > deadline:
                raise AssertionError("never ready")
            time.sleep(0.02)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def exists_for(path: Path, seconds: float) -> Callable[[], bool]:
    """A ``ready`` of :func:`kill_when`: ``path`` has existed for ``seconds`` (a job that
    slows down after its first checkpoint is then a few steps past it)."""
    seen: list[float] = []

    def ready() -> bool:
        if not seen and Path(path).exists():
            seen.append(time.monotonic())
        return bool(seen) and time.monotonic() - seen[0] >= seconds

    return ready


def expect_exit(sig: int) -> int:
    """The exit status of a job stopped by ``sig``: 143 for SIGTERM (the job checkpoints and
    exits), -9 for SIGKILL (Popen's convention for a signal death)."""
    return 143 if sig == signal.SIGTERM else -sig


def temporaries(root: Path) -> list[Path]:
    """Atomic writers' temporaries (``.name.XXXXXXXX.tmp``) anywhere under ``root``."""
    return sorted(p for p in Path(root).rglob(".*") if ".tmp" in p.name)


def slow_pretraining(seconds: float = 0.3) -> None:
    """Make every continued/from-scratch pre-training step in this process take
    ``seconds`` more once its first periodic checkpoint exists (time for a signal to land
    between two checkpoints, as it does at full scale)."""
    from xlalign.pretrain import trainer

    train = trainer.train

    def slowed(*args: Any, **kw: Any) -> Any:
        ckpt = Path(kw["work_dir"]) / trainer.CHECKPOINT
        on_step = kw.get("on_step")

        def step(done: int) -> None:
            if ckpt.exists():
                time.sleep(seconds)
            if on_step is not None:
                on_step(done)

        return train(*args, **{**kw, "on_step": step})

    trainer.train = slowed
