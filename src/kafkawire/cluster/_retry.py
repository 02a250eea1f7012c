"""Retrying a call until it succeeds, fails for good, or its time is up.

Rules:

- A call is a series of attempts inside one bounded scope (see :mod:`._deadline`). An attempt
  that raises a retriable kafkawire error (a closed connection, a timeout, a retriable error
  code) is tried again after a backoff (exponential with jitter, :class:`Backoff`) for as long
  as the deadline allows; the last backoff is cut to fit. Other errors, and any error once the
  client is closed, go to the caller at once.
- Before each retry, ``forget`` clears what the error invalidates (stale metadata, a moved
  coordinator), so the next attempt looks again.
- A broker that closes the connection in answer to the same call twice is refusing it
  (malformed, too large, a version it mishandles): :class:`RequestRefusedError`, not a retry
  until the deadline.
- With ``retry=False`` the first retriable error is raised (after ``forget``), for callers that
  retry themselves and must choose the broker again.
- The log: the first retry of a call is a WARNING naming the call and the error, later ones
  DEBUG; all DEBUG where a broker failed, which the pool warns of once (see :mod:`._health`).
- :meth:`Retries.close` cuts every backoff short: the call ends with
  :class:`ClientClosedError` instead of sleeping on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kafkawire.errors import ClientClosedError, ConnectionClosedError, KafkawireError
from kafkawire.net.errors import ConnectError, RequestTimeoutError

from ._deadline import Deadlines
from .backoff import Backoff

__all__ = ["RequestRefusedError", "Retries"]

_log = logging.getLogger(__name__)

T = TypeVar("T")
_REFUSALS = 2  # closes in answer to one call before it counts as refused


class RequestRefusedError(KafkawireError):
    """The broker closed the connection in answer to the same request again and again: it
    will not take it as it stands (malformed, too large, or a version it mishandles)."""


class Retries:
    """The retry loop of one client's calls."""

    def __init__(self, backoff: Backoff, deadlines: Deadlines, closed: Callable[[], bool]) -> None:
        self._backoff = backoff
        self._deadlines = deadlines
        self._closed = closed
        self._closing = asyncio.Event()  # wakes calls sleeping through their backoff

    def close(self) -> None:
        """End every backoff under way (its call raises :class:`ClientClosedError`)."""
        self._closing.set()

    async def call(
        self,
        what: str,
        attempt: Callable[[], Awaitable[T]],
        *,
        deadline: float,
        retry: bool = True,
        forget: Callable[[KafkawireError], None] | None = None,
    ) -> T:
        """Run ``attempt`` until it succeeds, within one call named ``what`` that ends by
        ``deadline`` (see the module doc)."""
        async with self._deadlines.bounded(what, deadline):
            delays = self._backoff.delays(deadline)
            refusals = retries = 0
            while True:
                try:
                    return await attempt()
                except KafkawireError as exc:
                    if not exc.retriable or self._closed():
                        raise
                    if forget is not None:
                        forget(exc)
                    if isinstance(exc, ConnectionClosedError) and exc.by_peer:
                        refusals += 1
                        if refusals >= _REFUSALS:
                            raise RequestRefusedError(
                                f"the broker closed the connection in answer to {what} "
                                f"{refusals} times: it refuses that request"
                            ) from exc
                    delay = next(delays, None) if retry else None
                    if delay is None:
                        raise
                    retries += 1
                    _log.log(
                        logging.WARNING
                        if retries == 1 and not _broker_failed(exc)
                        else logging.DEBUG,
                        "retrying %s (for up to %.3g s more) after: %s",
                        what,
                        deadline - time.monotonic(),
                        exc,
                    )
                    await self.sleep(delay)

    async def sleep(self, delay: float) -> None:
        """The backoff before a retry, cut short (with ClientClosedError) by close()."""
        # Not asyncio.wait_for: on Python 3.11 it can swallow a cancellation that arrives as
        # the event is set. asyncio.timeout tells its own expiry from a cancellation.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay):
                await self._closing.wait()
        if self._closed():
            raise ClientClosedError("the client was closed")


def _broker_failed(error: KafkawireError) -> bool:
    """Whether ``error`` is a broker failing to connect or answer (the pool logs those)."""
    return isinstance(error, ConnectError | ConnectionClosedError | RequestTimeoutError)
