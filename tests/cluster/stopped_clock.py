"""A clock for the cluster layer's timing rules (rebootstrap triggers, warning intervals) that a
test moves by hand: monkeypatched over the ``time`` module of the one module under test."""

from __future__ import annotations

__all__ = ["StoppedClock"]


class StoppedClock:
    """Stands in for the ``time`` module where a module reads it: time moves only when a test
    says (on real time, a loaded machine passed a 10 ms trigger between two lines)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now
