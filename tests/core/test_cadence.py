import pytest

from xlalign.core.cadence import CheckpointClock


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_due_only_after_the_interval_and_restarts_on_mark() -> None:
    t = FakeClock()
    c = CheckpointClock(60.0, clock=t)
    assert not c.due()
    t.now += 59.9
    assert not c.due()  # a run shorter than the interval writes none
    t.now += 0.1
    assert c.due()
    c.mark()
    assert not c.due()
    t.now += 60
    assert c.due()


def test_zero_is_always_due_and_none_never() -> None:
    t = FakeClock()
    assert CheckpointClock(0.0, clock=t).due()
    never = CheckpointClock(None, clock=t)
    t.now += 1e9
    assert not never.due()


def test_from_minutes() -> None:
    t = FakeClock()
    c = CheckpointClock.from_minutes(0.5, clock=t)
    assert c.interval_s == 30.0
    assert CheckpointClock.from_minutes(None, clock=t).interval_s is None


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_bad_interval_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="checkpoint interval"):
        CheckpointClock(bad)
