"""The fake cluster's time: deadlines on its clock, and a clock a test moves by hand.

Every timer of the cluster (a group member's session, a rebalance that waits for members, a
SyncGroup that waits for the leader, a KIP-848 member that must revoke partitions, a
transaction that times out) is one entry of a :class:`Timers`, keyed so that scheduling a key
again replaces its deadline, as Kafka's coordinator timer does. Deadlines are read against
the cluster's clock, never against the event loop's.

One way to move time, for the whole cluster::

    clock = ManualClock()
    async with FakeCluster(clock=clock) as cluster:
        ...
        clock.advance(45)  # every session, rebalance and transaction timer due fires now

- Without a clock (the default), the cluster runs on ``time.monotonic`` and each
  :class:`Timers` wakes itself with the running event loop (one ``call_later`` for the
  earliest deadline).
- With a :class:`ManualClock`, the cluster attaches its timers to it and nothing fires until
  the test calls :meth:`ManualClock.advance`, which walks time forward deadline by deadline,
  firing each timer at its own instant (so a timer that schedules another sees the right
  ``now``). Session expiry tests are then instant and exact. Fetch session eviction reads the
  same clock; what a client waits for (a Fetch's ``max_wait_ms``, a hook's ``ctx.sleep``)
  stays on real time, so clients never hang on a clock nobody moves.

In both, the group coordinator also fires what is due whenever it handles a request, so a
timer due "now" (a zero initial rebalance delay) never waits for a wake-up.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Hashable

__all__ = ["ManualClock", "Timers"]


class Timers:
    """Keyed one-shot timers on a clock that returns seconds."""

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._entries: dict[Hashable, tuple[float, int, Callable[[], None]]] = {}
        self._heap: list[tuple[float, int, Hashable]] = []
        self._sequence = itertools.count()
        self._wakeup: asyncio.TimerHandle | None = None
        self._by_hand = False
        self._closed = False
        self._firing = False

    def now(self) -> float:
        """The clock the deadlines are read against."""
        return self._now()

    def schedule(self, key: Hashable, delay_ms: float, action: Callable[[], None]) -> None:
        """Run ``action`` ``delay_ms`` from now, replacing any timer under ``key``."""
        if self._closed:
            return
        deadline = self._now() + max(delay_ms, 0) / 1000
        sequence = next(self._sequence)
        self._entries[key] = (deadline, sequence, action)
        heapq.heappush(self._heap, (deadline, sequence, key))
        self._arm()

    def cancel(self, key: Hashable) -> None:
        """Forget the timer under ``key`` (nothing if there is none)."""
        self._entries.pop(key, None)

    def is_scheduled(self, key: Hashable) -> bool:
        return key in self._entries

    def next_deadline(self) -> float | None:
        """The earliest deadline still scheduled, or ``None``."""
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def fire_due(self) -> None:
        """Run every timer whose deadline has come, earliest first.

        A timer scheduled by an action runs in the same call if it is already due. An action's
        exception propagates after the rest of the due timers stay scheduled.
        """
        if self._firing:
            return
        self._firing = True
        try:
            while True:
                self._drop_stale()
                if not self._heap or self._heap[0][0] > self._now():
                    break
                _, _, key = heapq.heappop(self._heap)
                _, _, action = self._entries.pop(key)
                action()
        finally:
            self._firing = False
            self._arm()

    def drive_by_hand(self) -> None:
        """Stop waking up with the event loop: the clock's owner calls :meth:`fire_due`."""
        self._by_hand = True
        self._disarm()

    def close(self) -> None:
        """Forget every timer; schedule no more."""
        self._closed = True
        self._entries.clear()
        self._heap.clear()
        self._disarm()

    def _drop_stale(self) -> None:
        # A cancelled or rescheduled key leaves its old heap entry behind; skip those.
        while self._heap:
            _, sequence, key = self._heap[0]
            entry = self._entries.get(key)
            if entry is not None and entry[1] == sequence:
                return
            heapq.heappop(self._heap)

    def _arm(self) -> None:
        if self._by_hand or self._closed or self._firing:
            return
        deadline = self.next_deadline()
        self._disarm()
        if deadline is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the next request handled fires what is due
        self._wakeup = loop.call_later(max(deadline - self._now(), 0), self._wake)

    def _disarm(self) -> None:
        if self._wakeup is not None:
            self._wakeup.cancel()
            self._wakeup = None

    def _wake(self) -> None:
        self._wakeup = None
        self.fire_due()


class ManualClock:
    """A clock that stands still until a test advances it; pass :meth:`now` as the cluster's
    clock and :meth:`attach` the coordinator's :class:`Timers`."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[Timers] = []

    def now(self) -> float:
        """The clock's time in seconds: where it started plus every :meth:`advance`."""
        return self._now

    def attach(self, timers: Timers) -> None:
        """Let :meth:`advance` fire ``timers`` (which stop waking up with the event loop)."""
        timers.drive_by_hand()
        self._timers.append(timers)

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, firing each due timer at its own deadline."""
        if seconds < 0:
            raise ValueError(f"ManualClock.advance: seconds must not be negative, got {seconds}")
        target = self._now + seconds
        while True:
            due = [(d, t) for t in self._timers if (d := t.next_deadline()) is not None]
            if not due:
                break
            deadline, timers = min(due, key=lambda pair: pair[0])
            if deadline > target:
                break
            self._now = max(self._now, deadline)
            timers.fire_due()
        self._now = target
        for timers in self._timers:
            timers.fire_due()
