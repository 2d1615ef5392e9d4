"""When a long job writes a resume checkpoint: on a wall-clock interval, not every N steps.

A resume checkpoint (weights, optimiser state, RNG states) of an encoder costs seconds and
hundreds of megabytes to gigabytes; written at every evaluation of a short run it makes
the job wait on the disk for longer than it computes, and nobody ever reads it. What a
resume is worth is the work it saves, i.e. time: :class:`CheckpointClock` says a
checkpoint is *due* once ``interval_s`` seconds of work have passed since the job started
or since the last checkpoint, so a run shorter than the interval writes none (SIGTERM
still checkpoints it: :mod:`xlalign.core.interrupt`), and a run of hours loses at most
``interval_s`` of work to a kill.

``interval_s = 0`` makes every opportunity due (the tests' kill-and-resume checks);
``None`` never is (checkpoints on SIGTERM only). The configuration sets it once for every
stage: ``checkpoints.interval_minutes``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

#: the default of ``checkpoints.interval_minutes`` (workflow/schemas/config.schema.yaml)
DEFAULT_INTERVAL_MINUTES = 10.0


class CheckpointClock:
    """Decides at each opportunity (an evaluation, a step boundary) whether to checkpoint.

    ``clock`` is the time source (seconds, monotonic); tests pass a fake one.
    """

    def __init__(
        self, interval_s: float | None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if interval_s is not None and (math.isnan(interval_s) or interval_s < 0):
            raise ValueError(f"checkpoint interval must be >= 0 seconds or None, got {interval_s}")
        self.interval_s = interval_s
        self._clock = clock
        self._last = clock()

    @classmethod
    def from_minutes(cls, minutes: float | None, **kwargs: Callable[[], float]) -> CheckpointClock:
        """The clock for ``checkpoints.interval_minutes`` (None: SIGTERM only)."""
        return cls(None if minutes is None else 60.0 * float(minutes), **kwargs)

    def due(self) -> bool:
        """Whether a checkpoint written now would be the first in ``interval_s`` seconds."""
        if self.interval_s is None:
            return False
        return self._clock() - self._last >= self.interval_s

    def mark(self) -> None:
        """A checkpoint was just written (periodic or on request): the interval restarts."""
        self._last = self._clock()
