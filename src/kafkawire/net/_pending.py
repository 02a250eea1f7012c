"""What a connection keeps of each request awaiting its response, and its deadline timer.

Rules:

- A request's :class:`Pending` is resolved or failed once; its future then holds the
  outcome, and its ``then`` callback (if it has one) is called at once, in the same step
  (not scheduled, as a future's done callbacks are): a caller that settles answers in a
  callback gets them without a turn of the event loop. What ``then`` raises is reported to the
  event loop's exception handler, never to the connection, which goes on.
- :class:`DeadlineAlarm` is the connection's one timer: set to ring at the soonest deadline
  of its requests, moved sooner when a request due sooner is added, and left as it is when
  requests are answered (it rings, the connection looks, and sets it again if need be).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["DeadlineAlarm", "Pending", "Then"]

Then = Callable[["asyncio.Future[Any]"], object]
"""Called with a request's future as soon as it is done."""


@dataclass(slots=True)
class Pending:
    future: asyncio.Future[Any]
    api_key: int
    version: int
    timeout: float | None
    deadline: float  # on the loop's clock; inf without a timeout
    then: Then | None = None

    def resolve(self, response: Any) -> None:
        self.future.set_result(response)
        self._tell()

    def fail(self, error: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(error)
            self._tell()

    def _tell(self) -> None:
        then = self.then
        if then is None:
            return
        try:
            then(self.future)
        except Exception as exc:  # the caller's bug: said where such bugs are said
            self.future.get_loop().call_exception_handler(
                {"message": "a request's callback raised", "exception": exc, "future": self.future}
            )


class DeadlineAlarm:
    """Calls ``ring()`` on ``loop`` at the soonest time it was asked to (see the module doc)."""

    __slots__ = ("_loop", "_ring", "_timer", "at")

    def __init__(self, loop: asyncio.AbstractEventLoop, ring: Callable[[], None]) -> None:
        self._loop = loop
        self._ring = ring
        self._timer: asyncio.TimerHandle | None = None
        self.at = math.inf  # when it rings (inf: not set)

    def ring_by(self, when: float) -> None:
        """Ring at ``when`` (the loop's clock) at the latest."""
        if when < self.at:
            self.cancel()
            self.at = when
            self._timer = self._loop.call_at(when, self._rang)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.at = math.inf

    def _rang(self) -> None:
        self._timer = None
        self.at = math.inf
        self._ring()
