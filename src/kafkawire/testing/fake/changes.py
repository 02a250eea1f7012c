"""A wake-up for whoever waits on the fake's state: long-polling fetches, tests' waits."""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["Changes"]


class Changes:
    """``notify()`` wakes every ``wait()`` begun before it. Waiters re-check their condition
    after waking, so one signal for many kinds of change is enough."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        """Until the next change, or ``timeout`` seconds."""
        event = self._event
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), max(timeout, 0))
