"""Requests written in the order their callers make them, such as a producer's batches.

Rules:

- :meth:`OrderedWrites.write` puts the request on the broker's open connection for its
  purpose before it returns, with no ``await`` in between; the answer is handed to the
  caller's callback. So requests written one after the other reach the broker in that order,
  as idempotent producing needs (a connection answers in order too), and no task waits for
  each: a producer writes a request per batch.
- Nothing is retried here: a retry would put the request behind ones written after it. The
  caller decides, and must choose the broker again (a leader may have moved).
- Without an open connection nothing is written: :class:`ConnectError`, and the metadata is
  marked stale. The caller opens the connection first (``Cluster.connection``).
- The request is one call by itself: it waits for its answer ``request_timeout`` (plus its
  deliberate wait), and at most ``retry_timeout`` (plus that wait), as the connection's
  deadline (a timeout closes the connection, as every request's does). An error clears what
  it invalidates and counts against the broker's health, as a send's does; once the client
  is closed, every error is :class:`~kafkawire.errors.ClientClosedError`.
- The callback is called once, with the response or the error (a retriable top-level error
  code is an error), as soon as the connection has it (as the answer is read, in that step);
  what it raises is the event loop's to report, so a caller catches what it does not
  expect itself.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import Any

from kafkawire.errors import ClientClosedError, ConnectionClosedError, KafkawireError
from kafkawire.net import Connection
from kafkawire.net.errors import ConnectError

from ._deadline import Deadlines, closed_error
from ._exchange import Exchange
from ._metadata_cache import MetadataCache
from ._pool import ConnectionPool, NodeKey, purpose_of
from ._router import Router
from ._routing import held_for

__all__ = ["OnAnswer", "OrderedWrites"]

OnAnswer = Callable[[Any, BaseException | None], object]
"""``on_answer(response, None)``, or ``on_answer(None, error)``: how a written request ended."""


class OrderedWrites:
    """Writes now, answers to a callback."""

    def __init__(
        self,
        pool: ConnectionPool,
        exchange: Exchange,
        router: Router,
        metadata: MetadataCache,
        deadlines: Deadlines,
    ) -> None:
        self._pool = pool
        self._exchange = exchange
        self._router = router
        self._metadata = metadata
        self._deadlines = deadlines

    def write(self, request: Any, node_id: int, on_answer: OnAnswer) -> None:
        """Write ``request`` to broker ``node_id`` now; ``on_answer`` hears how it ends."""
        purpose = purpose_of(type(request))
        conn = self._pool.connection_for(node_id, purpose)
        if conn is None:
            self._metadata.mark_stale()
            raise ConnectError(f"no open {purpose} connection to broker {node_id} to write on")
        answered = functools.partial(
            self._answered, node_id, conn, request, time.monotonic(), on_answer
        )
        try:
            conn.submit(request, timeout=self._deadlines.single(held_for(request)), then=answered)
        except KafkawireError as exc:
            if isinstance(exc, ConnectionClosedError):
                self._pool.failed(node_id, exc)
            self._router.forget(exc, request)
            raise

    def _answered(  # noqa: PLR0917 - bound by functools.partial, once per request
        self,
        key: NodeKey,
        conn: Connection,
        request: Any,
        sent: float,
        on_answer: OnAnswer,
        future: asyncio.Future[Any],
    ) -> None:
        error = future.exception()
        if error is not None and self._pool.closed:
            # The client closed under it: no failure of the broker's, nothing to forget.
            if isinstance(error, KafkawireError) and not isinstance(error, ClientClosedError):
                error = closed_error(f"{type(request).__name__} v{request.__version__}", error)
            on_answer(None, error)
            return
        try:
            response = self._exchange.settled(key, sent, future)
        except KafkawireError as exc:
            self._router.forget(exc, request)
            on_answer(None, exc)
        except Exception as exc:  # not ours to judge: the caller's
            on_answer(None, exc)
        else:
            on_answer(response, None)
