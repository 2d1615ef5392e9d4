"""xlalign.core.interrupt: SIGTERM as a checkpoint-and-stop request, and the job's exit status."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import resume

from xlalign.core import interrupt


@pytest.fixture(autouse=True)
def _isolated() -> Iterator[None]:
    """Each test starts with no request and this process's own SIGTERM handler back after."""
    saved_handler = signal.getsignal(signal.SIGTERM)
    saved_state = dict(interrupt._state)
    interrupt._state.update(requested=None, depth=0, installed=False)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, saved_handler)
        interrupt._state.clear()
        interrupt._state.update(saved_state)


def _sigterm() -> None:
    os.kill(os.getpid(), signal.SIGTERM)


def test_outside_a_checkpointable_stretch_sigterm_raises_at_once() -> None:
    interrupt.install()
    with pytest.raises(interrupt.Preempted, match="SIGTERM") as exc:
        _sigterm()
        for _ in range(1000):  # the handler runs at the next bytecode boundary
            pass
    assert exc.value.signum == signal.SIGTERM
    assert interrupt.requested() == signal.SIGTERM
    assert interrupt.EXIT_STATUS == 143


def test_inside_sigterm_is_recorded_and_the_loop_checkpoints_then_stops() -> None:
    saved: list[int] = []
    with pytest.raises(interrupt.Preempted, match="step 3"), interrupt.checkpointable():
        for step in range(10):
            interrupt.checkpoint_if_requested(lambda s=step: saved.append(s), f"step {step}")
            if step == 2:
                _sigterm()  # only recorded: the step goes on to its end
                assert interrupt.requested() == signal.SIGTERM
    assert saved == [3]  # one checkpoint, at the next step boundary
    assert interrupt._state["depth"] == 0  # the region was left


def test_no_request_no_checkpoint_and_reset_forgets() -> None:
    calls: list[int] = []
    with interrupt.checkpointable():
        interrupt.checkpoint_if_requested(lambda: calls.append(1))
        interrupt.raise_if_requested()
        _sigterm()
    assert calls == [] and interrupt.requested() == signal.SIGTERM
    interrupt.reset()
    assert interrupt.requested() is None
    interrupt.raise_if_requested()  # nothing to raise any more


def test_second_signal_inside_stops_at_once() -> None:
    with pytest.raises(interrupt.Preempted, match="second signal"), interrupt.checkpointable():
        _sigterm()
        assert interrupt.requested() == signal.SIGTERM
        _sigterm()  # e.g. a checkpoint that takes longer than the scheduler waits
        for _ in range(1000):
            pass


def test_nested_regions_and_install_twice() -> None:
    interrupt.install()
    interrupt.install()  # a no-op
    with interrupt.checkpointable():
        with interrupt.checkpointable():
            assert interrupt._state["depth"] == 2
        _sigterm()  # still inside the outer one: recorded only
    assert interrupt._state["depth"] == 0
    with pytest.raises(interrupt.Preempted):
        interrupt.raise_if_requested("outer")


def _run_job(body: str, tmp_path: Path) -> tuple[int, str]:
    log = tmp_path / "job.log"
    proc = subprocess.run(
        [sys.executable, "-c", resume.child_script(body), f'{{"log": "{log}"}}'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, log.read_text(encoding="utf-8")


def test_job_exits_143_on_sigterm_outside_a_region(tmp_path: Path) -> None:
    rc, log = _run_job(
        """
        import os, signal, time
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
        """,
        tmp_path,
    )
    assert rc == interrupt.EXIT_STATUS
    assert "stopped by SIGTERM" in log and "resumes from its checkpoint" in log
    assert "Traceback" not in log


def test_job_checkpoints_and_exits_143_inside_a_region(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    rc, log = _run_job(
        f"""
        import os, signal
        from pathlib import Path
        from xlalign.core import interrupt
        with interrupt.checkpointable():
            for step in range(100):
                if step == 5:
                    os.kill(os.getpid(), signal.SIGTERM)
                save = lambda: Path({str(ckpt)!r}).write_text(str(step))
                interrupt.checkpoint_if_requested(save, f"step {{step}}")
        """,
        tmp_path,
    )
    assert rc == interrupt.EXIT_STATUS
    assert ckpt.read_text() == "5"  # the step in which the signal came
    assert "stopped by SIGTERM (step 5)" in log


def test_job_failure_is_not_143(tmp_path: Path) -> None:
    rc, log = _run_job("raise ValueError('boom')", tmp_path)
    assert rc == 1 and "job failed" in log and "boom" in log


def test_checkpoint_files_are_read_safely(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import numpy as np

    from xlalign.core.io import atomic_open

    path = tmp_path / "state.npz"
    read = lambda fp: interrupt.read_checkpoint(  # noqa: E731
        path, interrupt.load_npz_checkpoint, fingerprint=fp, what="other inputs"
    )
    assert read("a") is None  # none yet
    with atomic_open(path, "wb") as fh:
        interrupt.save_npz_checkpoint(fh, {"fingerprint": "a", "step": 3}, {"w": np.arange(4.0)})
    (tmp_path / ".state.npz.abcd1234.tmp").write_bytes(b"half")  # a killed writer's
    state = read("a")
    assert state is not None and state["step"] == 3
    np.testing.assert_array_equal(state["arrays"]["w"], np.arange(4.0))
    assert not list(tmp_path.glob(".state.npz.*"))
    assert read("b") is None and "checkpoint is for other inputs" in caplog.text
    # pickled objects are refused, not run
    np.savez(path, state=np.array([{"fingerprint": "a"}], dtype=object))
    caplog.clear()
    assert read("a") is None and "unreadable checkpoint" in caplog.text
    path.write_bytes(b"garbage")
    assert read("a") is None
