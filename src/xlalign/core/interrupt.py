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

:func:`read_checkpoint` is the one careful reader of a checkpoint file (temporaries of a
killed writer removed, an unreadable file or one of other inputs ignored with a warning);
:func:`save_npz_checkpoint` / :func:`load_npz_checkpoint` store arrays plus a JSON state
without pickle.

:func:`install` puts the handler in place (job scripts and the CLI call it at start);
:data:`EXIT_STATUS` is the exit status of a pre-empted job (128 + 15, as a plain SIGTERM).
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

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


# --------------------------------------------------------------------------- checkpoint files


def read_checkpoint(
    path: str | Path, load: Callable[[Path], Mapping[str, Any]], *, fingerprint: str, what: str
) -> Mapping[str, Any] | None:
    """The checkpoint at ``path`` read with ``load``, if it is for these inputs.

    Temporaries of a writer killed mid-save (``.name.*`` beside it) are removed first.
    None when there is none, or (with a warning naming ``path``) when it cannot be read
    or its ``fingerprint`` differs: a checkpoint of ``what`` else (other inputs, options
    or seed) is never resumed from, it only costs the work done so far.
    """
    path = Path(path)
    for stale in path.parent.glob(f".{path.name}.*"):
        stale.unlink(missing_ok=True)
    if not path.is_file():
        return None
    try:
        state = load(path)
    except Exception as exc:
        log.warning("%s: unreadable checkpoint (%s); starting afresh", path, exc)
        return None
    if state.get("fingerprint") != fingerprint:
        log.warning(
            "%s: checkpoint is for %s (fingerprint mismatch); ignoring it and starting afresh",
            path,
            what,
        )
        return None
    return state


def save_npz_checkpoint(
    fh: Any, state: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
) -> None:
    """Write ``arrays`` and the JSON ``state`` into the open binary file ``fh`` (an
    ``atomic_open`` of the checkpoint path)."""
    import numpy as np  # here: the signal handling stays light

    np.savez(fh, state=np.array(json.dumps(state, sort_keys=True)), **arrays)


def load_npz_checkpoint(path: str | Path) -> dict[str, Any]:
    """A checkpoint of :func:`save_npz_checkpoint`: its state, arrays under ``arrays``
    (read without pickle)."""
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        state = json.loads(str(z["state"]))
        state["arrays"] = {k: np.array(z[k]) for k in z.files if k != "state"}
    return state
