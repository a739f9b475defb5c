"""The cost meter's stage clock: stages nest (the engine's ``propose`` around a writer
call's ``revise``), each is charged its own time only, and a run's stage times add up to
its wall time — never more — in every thread."""

from __future__ import annotations

import threading

import pytest

import core.engine.costs
from core.engine.costs import CostMeter


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(core.engine.costs.time, "perf_counter", fake)
    return fake


def seconds(meter: CostMeter) -> dict[str, float]:
    return {e.stage: e.seconds for e in meter.events(1)}


def test_a_nested_stage_is_charged_to_itself_and_not_to_the_stage_around_it(
    clock: Clock,
) -> None:
    meter = CostMeter()
    with meter.stage("propose"):
        clock.now += 1.0
        with meter.stage("revise", "offline"):
            clock.now += 3.0
        clock.now += 0.5
        with meter.stage("revise", "offline"):
            clock.now += 2.0
    assert seconds(meter) == {"propose": 1.5, "revise": 5.0}
    assert meter.total("seconds") == 6.5  # the wall time, counted once


def test_the_same_stage_nested_in_itself_counts_its_time_once(clock: Clock) -> None:
    meter = CostMeter()
    with meter.stage("refresh"):
        clock.now += 1.0
        with meter.stage("refresh"):
            clock.now += 2.0
    assert meter.total("seconds") == 3.0


def test_stages_in_other_threads_nest_on_their_own(clock: Clock) -> None:
    meter = CostMeter()
    with meter.stage("discover"):
        clock.now += 1.0

        def work() -> None:  # a fetch thread: its stage is not nested in "discover"
            with meter.stage("fetch"):
                clock.now += 2.0

        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert seconds(meter) == {"discover": 3.0, "fetch": 2.0}
