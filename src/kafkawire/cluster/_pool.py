"""The connections of one client: up to one per broker and purpose, opened lazily.

Why a connection per purpose: a broker answers the requests of one connection one at a time,
in order. A Fetch that long-polls, or a JoinGroup held for a rebalance, would hold up everything
queued behind it (produce, heartbeats, metadata). So, as franz-go does (``pkg/kgo/broker.go``),
Produce, Fetch and ShareFetch, JoinGroup and SyncGroup, and requests that carry a timeout of
their own (CreateTopics, DeleteRecords, ...) each get their own connection to a broker, and
everything else shares a normal one. Each opens on first use and negotiates ApiVersions.

A broker that failed (a connect that failed, a request that timed out, a connection that
broke) is not connected to again before its reconnect backoff ends (see :mod:`._health`): a
call that needs it waits for that, within the call's own deadline, instead of trying again at
once. Which broker serves a request any broker can answer (metadata, finding a coordinator):
one not in its backoff, with the fewest failures in a row, then the fewest requests in flight;
a response from a broker clears its failures. So a broker that stops answering with its
socket open is tried once, not chosen again and again while another broker answers.

After :meth:`ConnectionPool.close` nothing opens again: connects under way are cancelled and
their callers get :class:`~kafkawire.errors.ClientClosedError`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import typing
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Literal

from kafkawire.errors import ClientClosedError
from kafkawire.net import Connection
from kafkawire.net.errors import ConnectError

from ._health import RECONNECT_BACKOFF, WARN_INTERVAL, BrokerHealth
from .backoff import Backoff

__all__ = ["ConnectionFactory", "ConnectionPool", "NodeKey", "Purpose", "purpose_of"]

_log = logging.getLogger(__name__)

ConnectionFactory = Callable[[str, int], Awaitable[Connection]]
"""``connect(host, port)``: how the pool opens a connection to a broker; tests pass their own
to the clients' ``connect=``."""
NodeKey = int | tuple[str, int]  # a broker's node id, or a bootstrap address before metadata
Purpose = Literal["normal", "produce", "fetch", "group", "slow"]
Candidate = tuple[NodeKey, str, int]  # (key, host, port)

_PURPOSE_BY_KEY: dict[int, Purpose] = {
    0: "produce",
    1: "fetch",
    78: "fetch",
    11: "group",
    14: "group",
}


def purpose_of(request_cls: type[Any]) -> Purpose:
    """Which of a broker's connections carries requests of this class (see the module doc)."""
    purpose = _PURPOSE_BY_KEY.get(request_cls.__api_key__)
    if purpose is None:
        fields = getattr(request_cls, "__dataclass_fields__", {})
        purpose = "slow" if "timeout_ms" in fields else "normal"
    return purpose


def _describe(key: NodeKey, host: str, port: int) -> str:
    """``broker 3 (host:9092)`` or ``bootstrap address host:9092``, for messages."""
    return (
        f"broker {key} ({host}:{port})"
        if isinstance(key, int)
        else f"bootstrap address {host}:{port}"
    )


class ConnectionPool:
    """Connections by (broker, purpose), the record of recent failures, and closing."""

    def __init__(
        self,
        connect: ConnectionFactory,
        reconnect_backoff: Backoff = RECONNECT_BACKOFF,
        *,
        warn_interval: float = WARN_INTERVAL,
        on_connected: Callable[[], None] | None = None,
    ) -> None:
        self._connect = connect
        self._on_connected = on_connected  # told of each connection opened (for metrics)
        self._connections: dict[tuple[NodeKey, Purpose], Connection] = {}
        self._opening: dict[tuple[NodeKey, Purpose], asyncio.Task[Connection]] = {}
        self._health = BrokerHealth(reconnect_backoff, warn_interval=warn_interval)
        self._addresses: dict[NodeKey, tuple[str, int]] = {}  # where each key was last sought
        self._closing: set[asyncio.Future[None]] = set()  # surplus connections being closed
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    async def get(self, key: NodeKey, host: str, port: int, purpose: Purpose) -> Connection:
        """The open connection for ``purpose`` to ``key``, opening it if need be.

        Callers asking at once share one connect, which waits for the broker's reconnect
        backoff first if it has been failing. Raises :class:`ConnectError` naming the broker
        and its address when it cannot be reached or its address cannot be used.
        """
        if self.closed:
            raise ClientClosedError("the client is closed")
        slot = (key, purpose)
        conn = self._connections.get(slot)
        if conn is not None and not conn.closed:
            return conn
        opening = self._opening.get(slot)
        if opening is None:
            self._addresses[key] = (host, port)
            opening = asyncio.create_task(
                self._open(key, host, port, slot), name=f"kafkawire-connect {host}:{port}"
            )
            self._opening[slot] = opening
            opening.add_done_callback(lambda task: self._opened(slot, task))
        try:
            # Shielded: one caller giving up does not cancel the connect others wait for.
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if opening.cancelled() and task is not None and not task.cancelling():
                # Not this caller but the connect was cancelled: only close() does that.
                raise ClientClosedError("the client was closed while connecting") from None
            raise

    async def _open(
        self, key: NodeKey, host: str, port: int, slot: tuple[NodeKey, Purpose]
    ) -> Connection:
        async with self._health.turn_to_connect(key):
            try:
                conn = await self._connect(host, port)
            except Exception as exc:
                # Authentication and version errors too: Java backs off from any connect
                # that did not end ready, so nothing here reconnects in a tight loop.
                self.failed(key, exc)
                if isinstance(exc, ConnectError):
                    raise ConnectError(f"{_describe(key, host, port)}: {exc}") from exc
                raise
            self._health.connected(key)
        self._connections[slot] = conn
        if self._on_connected is not None:
            self._on_connected()
        return conn

    def _opened(self, slot: tuple[NodeKey, Purpose], task: asyncio.Task[Connection]) -> None:
        if self._opening.get(slot) is task:
            del self._opening[slot]
        if not task.cancelled():
            task.exception()  # seen here, so an error no caller awaited is not logged as lost

    def connection_for(self, key: NodeKey, purpose: Purpose) -> Connection | None:
        """The open connection for ``purpose`` to ``key``, or ``None`` (nothing is opened)."""
        conn = self._connections.get((key, purpose))
        return conn if conn is not None and not conn.closed else None

    def open_connection(self, key: NodeKey) -> Connection | None:
        """Any open connection to ``key`` (for its API versions), or ``None``."""
        return next(
            (c for (k, _), c in self._connections.items() if k == key and not c.closed), None
        )

    # --- health ----------------------------------------------------------------------------

    def failed(self, key: NodeKey, error: object) -> None:
        """Record a failure of ``key`` (``error`` is for the log): no connect to it before
        its reconnect backoff, which grows with each failure in a row, ends."""
        self._health.failed(key, self.describe(key), error)

    def answered(self, key: NodeKey) -> None:
        """``key`` answered a request: forget its failures."""
        self._health.answered(key, self.describe(key))

    def moved(self, key: NodeKey) -> None:
        """``key`` has a new address: its failures at the old one do not count there."""
        self._health.forget(key)

    def usable(self, key: NodeKey) -> bool:
        """Whether ``key`` has an open connection or may be connected to now."""
        return self.open_connection(key) is not None or self._health.retry_at(key) <= (
            time.monotonic()
        )

    def open_count(self) -> int:
        """How many connections are open now."""
        return sum(1 for c in self._connections.values() if not c.closed)

    def failing(self) -> list[tuple[str, int]]:
        """The brokers whose last attempts failed and that have not answered since: each
        described (as :meth:`describe`) with its failures in a row."""
        failing = ((key, self._health.failures(key)) for key in self._addresses)
        return [(self.describe(key), count) for key, count in failing if count]

    def describe(self, key: NodeKey) -> str:
        """``broker 3 (host:9092)`` or ``bootstrap address host:9092``, for messages."""
        host, port = self._addresses.get(key) or (key if isinstance(key, tuple) else ("?", 0))
        return _describe(key, host, port)

    def by_preference(self, candidates: Iterable[Candidate]) -> list[Candidate]:
        """``candidates`` best first: those that may be connected to now, fewest failures in
        a row, fewest requests in flight, an open connection, then at random; those in
        their reconnect backoff last, the one whose backoff ends first leading them."""
        now = time.monotonic()

        def rank(candidate: Candidate) -> tuple[float, int, int, int, float]:
            key = candidate[0]
            retry_at = self._health.retry_at(key)
            conns = [c for (k, _), c in self._connections.items() if k == key and not c.closed]
            load = sum(c.in_flight for c in conns)
            backing_off = retry_at if retry_at > now and not conns else 0.0
            failures = self._health.failures(key)
            return (backing_off, failures, load, 0 if conns else 1, random.random())

        return sorted(candidates, key=rank)

    # --- ownership -------------------------------------------------------------------------

    def adopt(self, address: tuple[str, int], node_id: int) -> None:
        """File connections opened by bootstrap ``address`` under the ``node_id`` they reach,
        so there stays one connection per broker and purpose."""
        for purpose in typing.get_args(Purpose):
            conn = self._connections.pop((address, purpose), None)
            if conn is None:
                continue
            existing = self._connections.get((node_id, purpose))
            if existing is None or existing.closed:
                self._connections[(node_id, purpose)] = conn
            else:
                self._close_later(conn)

    def drop(self, conn: Connection) -> None:
        """Close ``conn`` now (its requests fail; the next use opens a new one)."""
        self._close_later(conn)

    def _close_later(self, conn: Connection) -> None:
        closing = asyncio.ensure_future(conn.close())
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Close every connection and cancel every connect under way; nothing opens after."""
        self._closed = True
        opening = list(self._opening.values())
        for task in opening:
            task.cancel()
        connections, self._connections = list(self._connections.values()), {}
        closing = [c.close() for c in connections] + list(self._closing)
        await asyncio.gather(*opening, *closing, return_exceptions=True)
        # A connect that finished as it was cancelled may have filed its connection.
        late, self._connections = list(self._connections.values()), {}
        await asyncio.gather(*(c.close() for c in late), return_exceptions=True)
        if late:
            _log.debug("closed %d connections opened while closing", len(late))
