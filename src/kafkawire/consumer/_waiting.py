"""Waiting for an event with a time limit, without losing a cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

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


async def wait_any(events: Sequence[asyncio.Event], timeout: float) -> None:
    """Until one of ``events`` is set, or ``timeout`` seconds have passed."""
    if any(e.is_set() for e in events):
        return
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
