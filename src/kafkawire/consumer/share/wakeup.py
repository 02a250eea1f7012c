"""``wakeup()`` of the share consumer, as Java's ``WakeupTrigger``.

Rules: a wakeup is one pending flag, raised as :class:`~.errors.WakeupError` by the first
poll or ``commit`` that checks it (then cleared: several wakeups before it are one); a call
that waits also waits on it, so the one waiting now is the one that raises. It may be called
from any thread: from another than the consumer's event loop it is handed to that loop. A
closed consumer ignores it.
"""

from __future__ import annotations

import asyncio
import threading

from .errors import WakeupError

__all__ = ["Wakeup"]


class Wakeup:
    """The pending wakeup of one consumer; :attr:`event` is set while one is pending."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._disabled = False

    def bind(self) -> None:
        """The consumer runs on the running loop (called as it starts)."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()

    def disable(self) -> None:
        """The consumer closed: wakeups do nothing from now on."""
        self._disabled = True
        self.event.clear()

    def trigger(self) -> None:
        """Have the waiting poll or ``commit``, else the next, raise :class:`WakeupError`."""
        if self._disabled:
            return
        loop = self._loop
        if loop is None or threading.get_ident() == self._thread:
            self.event.set()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self._set_unless_disabled)

    def _set_unless_disabled(self) -> None:
        if not self._disabled:
            self.event.set()

    def check(self, what: str) -> None:
        """Raise the pending wakeup (once), naming the call ``what`` it ends."""
        if self.event.is_set():
            self.event.clear()
            raise WakeupError(f"{what} was ended by wakeup()")
