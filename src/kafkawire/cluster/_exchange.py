"""One request on one connection, and what its answer (or its failure) means.

Rules:

- A request goes at the version its class fixes; a broker that does not serve that version
  gets nothing and the caller a :class:`~kafkawire.net.NoCommonVersionError` naming both
  ranges. With ``negotiate`` it is converted to the highest version both sides support (at
  most ``max_version``), and fails before it is sent if it cannot be expressed there.
- It waits for its answer ``request_timeout`` plus any wait the broker may hold it for on
  purpose, cut to the time its call has left (see :mod:`._deadline`).
- A broker that does not answer (a timeout, a closed connection, a failed connect) is recorded
  as failing in the pool's health records; one that answers has its failures cleared.
- A request cut by its call's deadline timed out, as one that reached ``request_timeout``
  does (whose connection the connection itself closes): the broker is recorded as failing
  and the connection dropped, as Java's NetworkClient does, since a connection answers in
  order and the next request would queue behind it. A caller that gives up on a request the
  broker holds on purpose (a long poll) drops its connection too, for the same reason.
- A retriable top-level error code in the response is raised, for the retry loop; any other
  comes back in the response as it came, for the caller to judge.
- Each answer's latency (from the send to the answer, in ms) is told to ``on_answer`` with the
  broker's key: the per-broker request latencies of the client's metrics.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from kafkawire.errors import ConnectionClosedError
from kafkawire.net import Connection
from kafkawire.net.errors import ConnectError, RequestTimeoutError
from kafkawire.protocol import convert

from ._deadline import Deadlines, call_deadline_passed
from ._own_requests import top_level_error
from ._pool import ConnectionPool, NodeKey
from ._router import Router

__all__ = ["Exchange"]

# What says the broker did not answer: recorded as its failure.
_LOST = (RequestTimeoutError, ConnectionClosedError, ConnectError)


class Exchange:
    """Sends a request where the router says and reads what its answer means."""

    def __init__(
        self,
        pool: ConnectionPool,
        router: Router,
        deadlines: Deadlines,
        on_answer: Callable[[NodeKey, float], None],
    ) -> None:
        self._pool = pool
        self._router = router
        self._deadlines = deadlines
        self._on_answer = on_answer

    async def attempt(
        self,
        request: Any,
        node_id: int | None,
        negotiate: bool,
        max_version: int | None,
        held: float,
    ) -> Any:
        """One try of ``request`` (which the broker may hold ``held`` seconds on purpose)."""
        key, conn = await self._router.route(request, node_id)
        if negotiate:
            version = conn.version_for(request.__api_key__)
            if max_version is not None:
                version = min(version, max_version)
            request = convert(request, version)
        pending = conn.send(request, timeout=self._deadlines.timeout(held))
        return await self.answered(key, conn, pending, held)

    async def answered(
        self, key: NodeKey, conn: Connection, pending: Coroutine[Any, Any, Any], held: float
    ) -> Any:
        """The response ``pending`` (a request on ``conn`` to ``key``) awaits, after the
        health record is updated; a retriable top-level error code raised."""
        sent = time.monotonic()
        try:
            response = await pending
        except _LOST as exc:
            self._pool.failed(key, exc)
            raise
        except asyncio.CancelledError:
            if call_deadline_passed():
                # Cut by the call's deadline: a request timeout all the same. As Java's
                # NetworkClient, the connection goes: the broker answers a connection's
                # requests in order, so the next one would queue behind this one.
                self._pool.failed(key, "no answer before the call's deadline")
                self._pool.drop(conn)
            elif held:
                # The broker may hold it a long time yet, and its connection answers in order:
                # a new connection serves the next request sooner than this one would.
                self._pool.drop(conn)
            raise
        return self._judged(key, sent, response)

    def settled(self, key: NodeKey, sent: float, future: asyncio.Future[Any]) -> Any:
        """:meth:`answered` for a request sent at ``sent`` (``time.monotonic()``) whose
        ``future`` (:meth:`Connection.submit`'s) is done: its response, or its error raised."""
        try:
            response = future.result()
        except _LOST as exc:
            self._pool.failed(key, exc)
            raise
        return self._judged(key, sent, response)

    def _judged(self, key: NodeKey, sent: float, response: Any) -> Any:
        self._pool.answered(key)
        self._on_answer(key, (time.monotonic() - sent) * 1000)
        error = top_level_error(response)
        if error is not None and error.retriable:
            raise error
        return response
