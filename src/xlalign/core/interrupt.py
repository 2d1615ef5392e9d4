"""SIGTERM as a request to checkpoint and stop: a pre-empted job loses minutes, not hours.

Slurm pre-empts or times out a job by sending SIGTERM (then SIGKILL after ``KillWait``,
30 s by default), ``scancel`` and Snakemake stopping on Ctrl-C do the same. A long job
declares the stretches where it can stop cleanly with :func:`checkpointable`; inside one,
SIGTERM only *records* the request, and the job's loop polls :func:`requested` at each
step boundary, writes its checkpoint and raises :class:`Preempted`. Outside such a stretch
(and on a second SIGTERM inside one) the signal raises :class:`Preempted` at once, so the
``atomic_path`` writers still remove their temporaries on the way out.

:func:`checkpoint_if_requested` is the usual poll (save, then raise). A job whose
checkpoint is already on disk at every instant (finished shards or chunks, each written
atomically) needs no region: the exception raised at once stops it, and the ``finally``
blocks and atomic writers tidy up on the way out.

:func:`install` puts the handler in place (job scripts and the CLI call it at start);
:data:`EXIT_STATUS` is the exit status of a pre-empted job (128 + 15, as a plain SIGTERM).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

#: Exit status of a job stopped by SIGTERM (the shell's convention, 128 + signal number).
EXIT_STATUS = 128 + signal.SIGTERM

_SIGNALS = (signal.SIGTERM,)
_state = {"requested": None, "depth": 0, "installed": False}


class Preempted(BaseException):  # a signal, like KeyboardInterrupt
    """The job was asked to stop (SIGTERM); raised after its checkpoint was written.

    A ``BaseException`` like :class:`KeyboardInterrupt`, so that ``except Exception``
    blocks in the libraries a job calls do not swallow it.
    """

    def __init__(self, signum: int, where: str = "") -> None:
        self.signum = signum
        self.where = where
        name = signal.Signals(signum).name
        super().__init__(f"stopped by {name}" + (f" ({where})" if where else ""))


def _handler(signum: int, _frame: FrameType | None) -> None:
    already = _state["requested"] is not None
    _state["requested"] = signum
    if _state["depth"] == 0 or already:
        raise Preempted(signum, "no checkpoint pending" if not already else "second signal")


def install() -> None:
    """Handle SIGTERM as described above (main thread only; a no-op elsewhere, or twice)."""
    if _state["installed"] or threading.current_thread() is not threading.main_thread():
        return
    for sig in _SIGNALS:
        signal.signal(sig, _handler)
    _state["installed"] = True


def requested() -> int | None:
    """The signal number asking this process to stop, or None."""
    return _state["requested"]  # type: ignore[return-value]


def raise_if_requested(where: str = "") -> None:
    """Raise :class:`Preempted` when a stop was requested (call after the checkpoint)."""
    signum = requested()
    if signum is not None:
        raise Preempted(signum, where)


def checkpoint_if_requested(save: Callable[[], object], where: str = "") -> None:
    """At a step boundary: when a stop was requested, call ``save`` (write the checkpoint),
    then raise :class:`Preempted`; otherwise do nothing."""
    if requested() is not None:
        save()
        raise_if_requested(where)


@contextlib.contextmanager
def checkpointable() -> Iterator[None]:
    """A stretch whose loop polls :func:`requested` and checkpoints before stopping."""
    install()
    _state["depth"] = int(_state["depth"]) + 1  # type: ignore[call-overload]
    try:
        yield
    finally:
        _state["depth"] = int(_state["depth"]) - 1  # type: ignore[call-overload]


def reset() -> None:
    """Forget a recorded request (tests, and a process that handled it and goes on)."""
    _state["requested"] = None
