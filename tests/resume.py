"""Kill a long job part-way, then resume it: the shared pattern of the resume tests.

Parent side (the test):

- :func:`run_and_stop` starts a child script (:func:`child_script` wraps its body), waits
  until the child is part-way (by default: it wrote a flag file, see :func:`pause_after`;
  or any ``ready`` predicate, e.g. :func:`exists_for` a checkpoint), sends it a signal
  (SIGKILL, or SIGTERM as Slurm pre-emption does) and returns a :class:`Stopped` (exit
  status, the job log's text). The child runs its body inside the real
  ``xlalign.workflow.jobscript.job_logging``, so SIGTERM ends it with status 143 exactly
  as a workflow job (:func:`expect_exit`).
- :func:`assert_nothing_finished`: no output file exists and no atomic writer's temporary
  (``.name.XXXXXXXX.tmp``, :func:`leftover_temporaries`) is left.

Child side (inside the script body, where ``ARGS`` holds the JSON arguments and ``resume``
is this module): :func:`pause_after` wraps a function of the job so that after its n-th
matching call the child writes the flag and waits (until the signal comes, or a minute),
which makes "part-way" a precise, reproducible point instead of a race against time;
:func:`slow_pretraining` slows the encoder pre-training steps after the first periodic
checkpoint, so that a signal lands between two checkpoints as it does at full scale.

Example::

    body = '''
    from xlalign.static import teacher
    resume.pause_after(teacher, "_build_shard", flag=ARGS["flag"],
                       when=lambda out, k, *a, **kw: k == 1)
    teacher.build_teacher_cache(...)
    '''
    stopped = resume.run_and_stop(body, {...}, tmp_path, signal.SIGTERM)
    assert stopped.returncode == 143 and "stopped by SIGTERM" in stopped.log
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"
#: Exit status of a job stopped by SIGTERM (xlalign.core.interrupt.EXIT_STATUS).
SIGTERM_STATUS = 143

_PRELUDE = """\
import json, sys
from types import SimpleNamespace
sys.path[:0] = {paths!r}
import resume
from xlalign.workflow.jobscript import job_logging
ARGS = json.loads(sys.argv[1])
_threads = ARGS.get("threads", 1)
_smk = SimpleNamespace(log=[ARGS["log"]], threads=_threads, rule=ARGS.get("rule", "test"),
                       wildcards={{}})
with job_logging(_smk):
"""


def child_script(body: str, *paths: Path | str) -> str:
    """The Python source of a child that runs ``body`` as a workflow job would (inside
    ``job_logging``, logging to ``ARGS["log"]``; ``ARGS``: the JSON of ``sys.argv[1]``).

    ``paths`` (e.g. the test's own folder, to import the test module), tests/ and src/ are
    put first on ``sys.path``. ``ARGS["threads"]`` is the job's threads: 1 by default;
    :func:`run_and_stop` makes ``None`` the test process's torch thread count at the
    call (float sums depend on it: a test that compares the child's work with work done
    in the test process passes ``None``); ``ARGS["rule"]`` the rule's name (default
    ``test``).
    """
    where = [str(p) for p in (*paths, TESTS, SRC)]
    return _PRELUDE.format(paths=where) + textwrap.indent(textwrap.dedent(body), "    ")


@dataclass
class Stopped:
    """How a stopped child ended."""

    returncode: int  # 143 after SIGTERM (handled), -9 after SIGKILL
    log: str  # the job log (xlalign's logging, warnings, stderr)
    seconds: float  # from start to exit


def expect_exit(sig: int) -> int:
    """The exit status of a job stopped by ``sig``: 143 for SIGTERM (the job checkpoints and
    exits), ``-sig`` otherwise (Popen's convention for a signal death, -9 for SIGKILL)."""
    return SIGTERM_STATUS if sig == signal.SIGTERM else -sig


def run_and_stop(
    body: str,
    args: dict[str, Any],
    tmp: Path,
    sig: int,
    *,
    ready: Path | Callable[[], bool] | None = None,
    paths: Iterable[Path | str] = (),
    timeout: float = 120.0,
    name: str = "job",
) -> Stopped:
    """Run ``body`` (see :func:`child_script`, ``paths`` go with it) in a child, signal it
    with ``sig`` once ``ready`` (a predicate, or a path that exists; default:
    ``args["flag"]`` exists), wait for it to exit, return how it did.

    ``args`` gets ``log`` (``tmp/<name>.log``, appended to across runs) and ``flag``
    (``tmp/<name>.flag``, removed first) unless given. Fails the test if the child exits
    before it is ready, is not ready within ``timeout`` seconds of its start or does not
    exit within ``timeout`` seconds of the signal.
    """
    args = {"log": str(tmp / f"{name}.log"), "flag": str(tmp / f"{name}.flag"), **args}
    if "threads" in args and args["threads"] is None:
        import torch

        args["threads"] = torch.get_num_threads()
    flag = Path(args["flag"])
    flag.unlink(missing_ok=True)
    Path(args["log"]).parent.mkdir(parents=True, exist_ok=True)
    log_path = Path(args["log"])
    offset = log_path.stat().st_size if log_path.exists() else 0
    is_ready = ready if callable(ready) else (lambda p=Path(ready or flag): p.exists())
    start = time.monotonic()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.Popen(
        [sys.executable, "-c", child_script(body, *paths), json.dumps(args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = start + timeout
        while not is_ready():
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise AssertionError(
                    f"the child exited ({proc.returncode}) before it was ready; log:\n"
                    f"{_read_from(log_path, offset)[-3000:]}\nstderr:\n{err[-3000:]}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"the child was not ready within {timeout} s")
            time.sleep(0.02)
        proc.send_signal(sig)
        proc.communicate(timeout=timeout)  # reads stderr meanwhile: a full pipe blocks no one
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()
    return Stopped(proc.returncode, _read_from(log_path, offset), time.monotonic() - start)


def _read_from(path: Path, offset: int) -> str:
    if not path.exists():
        return ""
    with path.open("rb") as fh:
        fh.seek(offset)
        return fh.read().decode("utf-8", errors="replace")


def exists_for(path: Path, seconds: float) -> Callable[[], bool]:
    """A ``ready`` of :func:`run_and_stop`: ``path`` has existed for ``seconds`` (a job
    slowed down after its first checkpoint is then a few steps past it)."""
    seen: list[float] = []

    def ready() -> bool:
        if not seen and Path(path).exists():
            seen.append(time.monotonic())
        return bool(seen) and time.monotonic() - seen[0] >= seconds

    return ready


def leftover_temporaries(*roots: Path) -> list[Path]:
    """Atomic writers' temporaries (``.name.XXXXXXXX.tmp...``) under ``roots``."""
    found: list[Path] = []
    for root in roots:
        if Path(root).exists():
            found += [p for p in Path(root).rglob(".*") if ".tmp" in p.name]
    return sorted(found)


def assert_nothing_finished(outputs: Iterable[Path], roots: Iterable[Path] = ()) -> None:
    """No output exists and no temporary is left under ``roots`` (and the outputs' folders)."""
    outputs = [Path(p) for p in outputs]
    present = [p for p in outputs if p.exists()]
    assert not present, f"finished-looking outputs after the kill: {present}"
    dirs = {p.parent for p in outputs} | {Path(r) for r in roots}
    stray = leftover_temporaries(*dirs)
    assert not stray, f"temporaries left after the kill: {stray}"


# ----------------------------------------------------------------------------- child side


def pause_after(
    owner: Any,
    name: str,
    *,
    flag: str | Path,
    when: Callable[..., bool] | None = None,
    nth: int = 1,
    seconds: float = 60.0,
) -> None:
    """Wrap ``owner.name`` so that after its ``nth`` call for which ``when(*args, **kwargs)``
    holds (default: every call), the child writes ``flag`` and waits: until ``seconds``
    passed, or (inside a checkpointable stretch) until a stop was requested, so the job
    goes on to its next step boundary and checkpoints there."""
    from xlalign.core import interrupt

    original = getattr(owner, name)
    seen = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if when is None or when(*args, **kwargs):
            seen[0] += 1
            if seen[0] == nth:
                Path(flag).write_text("paused", encoding="utf-8")
                end = time.monotonic() + seconds
                while time.monotonic() < end and interrupt.requested() is None:
                    time.sleep(0.02)
        return result

    setattr(owner, name, wrapper)


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


__all__ = [
    "SIGTERM_STATUS",
    "Stopped",
    "assert_nothing_finished",
    "child_script",
    "exists_for",
    "expect_exit",
    "leftover_temporaries",
    "pause_after",
    "run_and_stop",
    "slow_pretraining",
]
