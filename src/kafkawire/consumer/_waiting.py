"""Waiting for an event with a time limit, without losing a cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

__all__ = ["wait_any", "wait_event"]


async def wait_event(event: asyncio.Event, timeout: float) -> bool:
    """Whether ``event`` was set within ``timeout`` seconds.

    Not ``asyncio.wait_for``: on Python 3.11 it can swallow a cancellation that arrives as the
    event is set, which left a cancelled background loop running (and ``close`` waiting for
    it). ``asyncio.timeout`` tells its own expiry from a cancellation.
    """
    try:
        async with asyncio.timeout(timeout):
            await event.wait()
    except TimeoutError:
        return False
    return True


async def wait_any(waits: Sequence[asyncio.Event | asyncio.Future[Any]], timeout: float) -> None:
    """Until one of ``waits`` is set (an event) or done (a future), or ``timeout`` seconds
    have passed. The futures are left as they are (others may wait on them too)."""
    if any(w.is_set() if isinstance(w, asyncio.Event) else w.done() for w in waits):
        return
    events = [asyncio.ensure_future(w.wait()) for w in waits if isinstance(w, asyncio.Event)]
    futures = [w for w in waits if not isinstance(w, asyncio.Event)]
    try:
        await asyncio.wait(
            [*events, *futures], timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        for e in events:
            e.cancel()
        await asyncio.gather(*events, return_exceptions=True)
