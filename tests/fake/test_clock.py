"""The fake cluster's timers: keyed deadlines on the cluster's clock, fired by a hand-driven
clock at their own instants, or by the event loop on a real clock."""

from __future__ import annotations

import asyncio
import time

import pytest

from kafkawire.testing.fake.clock import ManualClock, Timers


def _timers() -> tuple[ManualClock, Timers, list[tuple[str, float]]]:
    clock = ManualClock(100.0)
    timers = Timers(clock.now)
    clock.attach(timers)
    return clock, timers, []


def test_advance_fires_each_timer_at_its_own_deadline_in_order() -> None:
    clock, timers, fired = _timers()
    timers.schedule("b", 2000, lambda: fired.append(("b", clock.now())))
    timers.schedule("a", 1000, lambda: fired.append(("a", clock.now())))
    timers.schedule("c", 5000, lambda: fired.append(("c", clock.now())))

    clock.advance(3)

    assert fired == [("a", 101.0), ("b", 102.0)]
    assert clock.now() == 103.0
    assert timers.next_deadline() == 105.0


def test_scheduling_a_key_again_replaces_its_deadline_and_cancel_forgets_it() -> None:
    clock, timers, fired = _timers()
    timers.schedule("session", 1000, lambda: fired.append(("first", clock.now())))
    timers.schedule("session", 3000, lambda: fired.append(("second", clock.now())))
    timers.schedule("other", 500, lambda: fired.append(("other", clock.now())))
    timers.cancel("other")

    clock.advance(10)

    assert fired == [("second", 103.0)]
    assert not timers.is_scheduled("session")


def test_a_timer_scheduled_by_a_timer_fires_in_the_same_advance_when_due() -> None:
    clock, timers, fired = _timers()

    def first() -> None:
        fired.append(("first", clock.now()))
        timers.schedule("second", 500, lambda: fired.append(("second", clock.now())))

    timers.schedule("first", 1000, first)
    clock.advance(2)

    assert fired == [("first", 101.0), ("second", 101.5)]


def test_nothing_fires_before_its_deadline_and_close_forgets_everything() -> None:
    clock, timers, fired = _timers()
    timers.schedule("a", 1000, lambda: fired.append(("a", clock.now())))
    clock.advance(0.999)
    assert fired == []
    timers.close()
    timers.schedule("b", 0, lambda: fired.append(("b", clock.now())))
    clock.advance(5)
    assert fired == []


def test_advance_refuses_to_go_back() -> None:
    with pytest.raises(ValueError, match="seconds must not be negative"):
        ManualClock().advance(-1)


async def test_on_a_real_clock_the_event_loop_fires_due_timers() -> None:
    timers = Timers(time.monotonic)
    fired = asyncio.Event()
    timers.schedule("soon", 1, fired.set)
    await asyncio.wait_for(fired.wait(), timeout=5)
    timers.close()
