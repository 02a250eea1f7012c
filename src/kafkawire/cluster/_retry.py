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
- A call that runs out of time raises one error, :class:`CallTimeoutError` (a
  :class:`RequestTimeoutError`), naming the call and the last error it met, which is its
  ``__cause__`` (Java's ``TimeoutException`` "... Last error: ..."), however the time ran out:
  in an attempt, or with no time left for the next one. A call whose attempts met no error
  (the first was never answered) says so, without a cause.
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
import math
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kafkawire.errors import ClientClosedError, ConnectionClosedError, KafkawireError
from kafkawire.net.errors import ConnectError, RequestTimeoutError

from ._deadline import Deadlines, cut_to_deadline
from .backoff import Backoff

__all__ = ["CallTimeoutError", "RequestRefusedError", "Retries"]

_log = logging.getLogger(__name__)

T = TypeVar("T")
_REFUSALS = 2  # closes in answer to one call before it counts as refused


class RequestRefusedError(KafkawireError):
    """The broker closed the connection in answer to the same request again and again: it
    will not take it as it stands (malformed, too large, or a version it mishandles)."""


class CallTimeoutError(RequestTimeoutError):
    """A call retried on retriable errors ran out of its time: the message names the call and
    the last error it met, which is also its ``__cause__`` (``None`` if it met none)."""

    @classmethod
    def after(
        cls, what: str, seconds: float, failures: int, last: BaseException | None
    ) -> CallTimeoutError:
        """The timeout of ``what`` after ``seconds``, ``failures`` attempts having failed, the
        last with ``last`` (its cause; none: the attempts were not answered)."""
        # Rounded up to 10 ms, as the scope's own message: "within 0.996 s" reads as a bug.
        shown = f"{math.ceil(seconds * 100) / 100:.3g} s"
        if last is None:
            return cls(f"{what}: no answer within {shown}")
        attempts = f"{failures} attempt" + ("s" if failures > 1 else "")
        error = cls(f"{what}: not done within {shown} ({attempts} failed); last error: {last}")
        error.__cause__ = last
        return error


class _OutOfTime(Exception):
    """No time is left for another attempt (raised inside :meth:`Retries.call` only)."""


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
        budget = cut_to_deadline(deadline - time.monotonic())
        errors: list[KafkawireError] = []  # met by the attempts so far
        try:
            async with self._deadlines.bounded(what, deadline):
                return await self._attempts(
                    what, attempt, deadline=deadline, retry=retry, forget=forget, errors=errors
                )
        except _OutOfTime:
            raise CallTimeoutError.after(what, budget, len(errors), errors[-1]) from errors[-1]
        except RequestTimeoutError as exc:
            if isinstance(exc, CallTimeoutError) or (errors and exc is errors[-1]):
                raise  # an attempt's own error, raised as it is
            if not errors:  # the scope's expiry, with nothing met before it
                raise CallTimeoutError(str(exc)) from None
            raise CallTimeoutError.after(what, budget, len(errors), errors[-1]) from errors[-1]

    async def _attempts(
        self,
        what: str,
        attempt: Callable[[], Awaitable[T]],
        *,
        deadline: float,
        retry: bool,
        forget: Callable[[KafkawireError], None] | None,
        errors: list[KafkawireError],
    ) -> T:
        delays = self._backoff.delays(deadline)
        refusals = 0
        while True:
            try:
                return await attempt()
            except KafkawireError as exc:
                if not exc.retriable or self._closed():
                    raise
                errors.append(exc)
                if forget is not None:
                    forget(exc)
                if isinstance(exc, ConnectionClosedError) and exc.by_peer:
                    refusals += 1
                    if refusals >= _REFUSALS:
                        raise RequestRefusedError(
                            f"the broker closed the connection in answer to {what} "
                            f"{refusals} times: it refuses that request"
                        ) from exc
                if not retry:
                    raise
                delay = next(delays, None)
                if delay is None:
                    raise _OutOfTime from exc
                _log.log(
                    logging.WARNING
                    if len(errors) == 1 and not _broker_failed(exc)
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
