"""The deadline of the call the current task is in, so that every request and connect it
makes is cut to the time the call has left."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections.abc import AsyncIterator, Callable

from kafkawire.errors import ClientClosedError, KafkawireError
from kafkawire.net.errors import RequestTimeoutError

__all__ = ["bounded", "cut_to_deadline"]

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
        raise RequestTimeoutError(f"{what}: no answer within {budget:.3g} s") from None
    except KafkawireError as exc:
        if closed() and not isinstance(exc, ClientClosedError):
            raise ClientClosedError(f"{what}: the client was closed") from exc
        raise
    finally:
        _call_deadline.reset(token)


def cut_to_deadline(timeout: float) -> float:
    """``timeout``, cut to the time the enclosing call has left (never below a millisecond)."""
    deadline = _call_deadline.get()
    if deadline is None:
        return timeout
    return max(_MIN_TIMEOUT, min(timeout, deadline - time.monotonic()))
