"""The time bounds of a client's calls.

Rules:

- One call is bounded in time as a whole: by default ``retry_timeout`` from its start (Java's
  ``default.api.timeout.ms``), plus any wait the broker may hold its request for on purpose
  (a long-polling Fetch, a JoinGroup). The search for a broker, every attempt and the backoff
  between them all come out of that bound.
- A call's deadline is held for the task that makes it (a context variable), so every request
  and connect made inside it, however deep, is cut to the time the call has left; an enclosing
  call's deadline wins where it is sooner.
- One request waits at most ``request_timeout`` (plus its deliberate wait), cut to what the
  call has left, and never less than a millisecond.
- What ends a call early becomes a kafkawire error: :class:`RequestTimeoutError` naming the
  call when its deadline passes, :class:`ClientClosedError` for a kafkawire error raised once
  the client is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import time
from collections.abc import AsyncIterator, Callable

from kafkawire.errors import ClientClosedError, KafkawireError
from kafkawire.net.errors import RequestTimeoutError

__all__ = ["Deadlines", "bounded", "call_deadline_passed", "closed_error", "cut_to_deadline"]

_MIN_TIMEOUT = 0.001
_call_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "kafkawire_call_deadline", default=None
)


@contextlib.asynccontextmanager
async def bounded(what: str, deadline: float, closed: Callable[[], bool]) -> AsyncIterator[None]:
    """A scope for one call that ends by ``deadline`` (``time.monotonic()``; an enclosing
    scope's deadline wins if sooner): :class:`RequestTimeoutError` naming ``what`` when it
    passes, :class:`ClientClosedError` for a kafkawire error raised once ``closed()``."""
    outer = _call_deadline.get()
    if outer is not None:
        deadline = min(deadline, outer)
    budget = max(0.0, deadline - time.monotonic())
    scope = asyncio.timeout(budget)
    token = _call_deadline.set(deadline)
    try:
        async with scope:
            yield
    except TimeoutError:
        if not scope.expired():
            raise
        # Rounded up to 10 ms: the budget is measured as the scope opens, a moment after the
        # call's deadline was set, and "within 0.996 s" for a 1 s timeout reads as a bug.
        shown = math.ceil(budget * 100) / 100
        raise RequestTimeoutError(f"{what}: no answer within {shown:.3g} s") from None
    except KafkawireError as exc:
        if closed() and not isinstance(exc, ClientClosedError):
            raise closed_error(what, exc) from exc
        raise
    finally:
        _call_deadline.reset(token)


def closed_error(what: str, error: KafkawireError) -> ClientClosedError:
    """What ``error`` (not a :class:`ClientClosedError`), met by the call ``what`` once its
    client was closed, becomes."""
    closed = ClientClosedError(f"{what}: the client was closed")
    closed.__cause__ = error
    return closed


def call_deadline_passed() -> bool:
    """Whether the enclosing call's deadline has passed (false outside a call)."""
    deadline = _call_deadline.get()
    return deadline is not None and time.monotonic() >= deadline


def cut_to_deadline(timeout: float) -> float:
    """``timeout``, cut to the time the enclosing call has left (never below a millisecond)."""
    deadline = _call_deadline.get()
    if deadline is None:
        return timeout
    return max(_MIN_TIMEOUT, min(timeout, deadline - time.monotonic()))


class Deadlines:
    """One client's bounds: ``call_timeout`` for a call as a whole and ``request_timeout`` for
    one request in it (seconds); ``closed()`` says whether the client has been closed."""

    __slots__ = ("_call_timeout", "_closed", "_request_timeout")

    def __init__(
        self, *, call_timeout: float, request_timeout: float, closed: Callable[[], bool]
    ) -> None:
        self._call_timeout = call_timeout
        self._request_timeout = request_timeout
        self._closed = closed

    def deadline(self, extra: float = 0.0) -> float:
        """The deadline of a call starting now: ``call_timeout`` (plus ``extra``) from now."""
        return time.monotonic() + self._call_timeout + extra

    def timeout(self, held: float = 0.0) -> float:
        """One request's timeout: ``request_timeout`` plus any deliberate wait (``held``), cut
        to the time the enclosing call has left."""
        return cut_to_deadline(self._request_timeout + held)

    def single(self, held: float = 0.0) -> float:
        """The timeout of a request that is a whole call by itself (never retried): the
        request's (:meth:`timeout`), and at most the call's."""
        return min(self.timeout(held), self._call_timeout + held)

    def bounded(self, what: str, deadline: float) -> contextlib.AbstractAsyncContextManager[None]:
        """A scope for one call named ``what`` that ends by ``deadline`` (see :func:`bounded`)."""
        return bounded(what, deadline, self._closed)
