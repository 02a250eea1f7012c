"""Bootstrap, the metadata cache, one connection per broker, routing and retries.

Rules this module keeps:

- A request goes where its class's ``__route__`` says: any broker, the leader of the partitions
  it names, the coordinator of the one group or transactional id it names (found by the fields'
  entity types, so batched forms such as OffsetFetch v8+ route too), or (``every``) each
  broker in turn through :meth:`Cluster.send_to_all`.
- Requests are built at any version (usually the newest) and converted to the version the
  chosen broker negotiated; a request that cannot be expressed there fails before it is sent.
- Retriable errors (a closed connection, a timeout, a retriable top-level error code) are
  retried with exponential backoff and jitter until ``retry_timeout`` passes; errors that mean
  stale metadata refresh the cache first, and coordinator errors (or failing to reach the
  coordinator) forget the coordinator. Other errors, and top-level error codes that are not
  retriable, go back to the caller: ``send`` returns the broker's response as it came, error
  code included, for the caller to judge.
- Connections open lazily, one per broker, and are reused; a closed one is reopened on next use.
- A request the broker may hold on purpose (a long-polling Fetch, a JoinGroup waiting for the
  rebalance) gets that wait added to ``request_timeout``, so it is not timed out and resent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

from kafkawire.errors import (
    ConnectionClosedError,
    KafkawireError,
    UnknownTopicIdError,
    error_for_code,
)
from kafkawire.messages import request_type
from kafkawire.messages.metadata import v13 as metadata_latest
from kafkawire.net import Connection
from kafkawire.net.errors import ConnectError
from kafkawire.protocol import convert

from ._routing import (
    GROUP,
    RoutingError,
    coordinator_key,
    held_for,
    partitions_named,
)
from .backoff import Backoff
from .metadata import ClusterMetadata

__all__ = ["Cluster", "RoutingError", "parse_bootstrap"]

_log = logging.getLogger(__name__)

ConnectionFactory = Callable[[str, int], Awaitable[Connection]]
_FIND_COORDINATOR = 10


def parse_bootstrap(bootstrap: str | Sequence[str]) -> list[tuple[str, int]]:
    """``"h1:9092,h2:9092"`` or ``["h1:9092", "[::1]:9092"]`` -> ``[(host, port), ...]``."""
    items = bootstrap.split(",") if isinstance(bootstrap, str) else list(bootstrap)
    addresses = []
    for item in (i.strip() for i in items):
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit() or not host:
            raise ValueError(f"bootstrap address {item!r} is not host:port")
        addresses.append((host.strip("[]"), int(port)))
    if not addresses:
        raise ValueError("no bootstrap addresses")
    return addresses


class Cluster:
    """A Kafka cluster as seen from one client: use as ``async with Cluster("host:9092") as c``."""

    def __init__(
        self,
        bootstrap: str | Sequence[str],
        *,
        connect: ConnectionFactory | None = None,
        client_id: str = "kafkawire",
        request_timeout: float = 30.0,
        retry_timeout: float = 30.0,
        metadata_max_age: float = 300.0,
        backoff: Backoff | None = None,
        **connection_options: Any,
    ) -> None:
        """``connection_options`` (``ssl``, ``sasl``, ...) go to :meth:`Connection.open`."""
        self._bootstrap = parse_bootstrap(bootstrap)
        self.request_timeout = request_timeout
        self._connect: ConnectionFactory = connect or (
            lambda host, port: Connection.open(
                host,
                port,
                client_id=client_id,
                request_timeout=request_timeout,
                **connection_options,
            )
        )
        self.retry_timeout = retry_timeout
        self.metadata_max_age = metadata_max_age
        self.backoff = backoff or Backoff()
        self._connections: dict[int | tuple[str, int], Connection] = {}
        self._opening: dict[int | tuple[str, int], asyncio.Lock] = {}
        self._metadata: ClusterMetadata | None = None
        self._metadata_stale = True
        self._metadata_lock = asyncio.Lock()
        self._coordinators: dict[tuple[int, str], int] = {}
        self._closing: set[asyncio.Future[None]] = set()  # surplus connections being closed

    async def __aenter__(self) -> Cluster:
        try:
            await self.metadata()
        except BaseException:
            await self.close()  # the bootstrap connection, if one opened
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        connections, self._connections = list(self._connections.values()), {}
        closing = [c.close() for c in connections] + list(self._closing)
        await asyncio.gather(*closing, return_exceptions=True)

    # --- connections ---------------------------------------------------------------------

    async def _open(self, key: int | tuple[str, int], host: str, port: int) -> Connection:
        conn = self._connections.get(key)
        if conn is not None and not conn.closed:
            return conn
        async with self._opening.setdefault(key, asyncio.Lock()):
            conn = self._connections.get(key)
            if conn is None or conn.closed:
                conn = self._connections[key] = await self._connect(host, port)
            return conn

    async def connection(self, node_id: int) -> Connection:
        """The connection to broker ``node_id`` (opened on first use, reopened if closed)."""
        broker = (await self.metadata()).brokers.get(node_id)
        if broker is None:
            self._metadata_stale = True
            raise ConnectError(f"broker {node_id} is not in the cluster metadata")
        return await self._open(node_id, broker.host, broker.port)

    async def any_connection(self) -> Connection:
        """An open connection if there is one, else the first broker that answers."""
        for conn in self._connections.values():
            if not conn.closed:
                return conn
        known = self._metadata.brokers.values() if self._metadata else ()
        candidates: list[tuple[int | tuple[str, int], str, int]] = [
            (b.node_id, b.host, b.port) for b in random.sample(list(known), len(known))
        ]
        candidates += [((host, port), host, port) for host, port in self._bootstrap]
        failures = []
        for key, host, port in candidates:
            try:
                return await self._open(key, host, port)
            except ConnectError as exc:
                failures.append(str(exc))
        raise ConnectError("no broker answered: " + "; ".join(failures))

    # --- metadata --------------------------------------------------------------------------

    async def metadata(self, topics: Collection[str] = ()) -> ClusterMetadata:
        """Cached metadata, refreshed when stale, older than ``metadata_max_age``, or lacking
        one of ``topics``.

        Tasks that find the cache stale at once share one refresh: each re-checks the cache
        once it holds the lock, so the ones that waited take the answer the first one got.
        """
        cached = self._usable_metadata(topics)
        if cached is not None:
            return cached
        async with self._metadata_lock:
            cached = self._usable_metadata(topics)
            return cached or await self._refresh(topics or None)

    async def refresh_metadata(self, topics: Collection[str] | None = None) -> ClusterMetadata:
        """Ask any broker for the brokers and for ``topics`` (all topics when ``None``)."""
        async with self._metadata_lock:
            return await self._refresh(topics)

    def _usable_metadata(self, topics: Collection[str]) -> ClusterMetadata | None:
        """The cache, unless it is stale, too old, or lacks one of ``topics``."""
        cached = self._metadata
        if (
            cached is None
            or self._metadata_stale
            or cached.age() > self.metadata_max_age
            or any(t not in cached.topics for t in topics)
        ):
            return None
        return cached

    async def _refresh(self, topics: Collection[str] | None) -> ClusterMetadata:
        """The refresh itself; the caller holds ``_metadata_lock``."""
        conn = await self.any_connection()
        version = conn.version_for(metadata_latest.MetadataRequest.__api_key__)
        request = _metadata_request(topics, version)
        fresh = ClusterMetadata.from_response(await conn.send(request))
        if topics is not None and self._metadata is not None:
            # A partial answer updates the topics it names and keeps the rest.
            merged = {**self._metadata.topics, **fresh.topics}
            fresh = dataclasses.replace(fresh, topics=merged)
        self._metadata, self._metadata_stale = fresh, False
        self._adopt_bootstrap_connections(fresh)
        return fresh

    def _adopt_bootstrap_connections(self, metadata: ClusterMetadata) -> None:
        """File connections opened by bootstrap address under the node id they reach, so
        there stays one connection per broker."""
        for broker in metadata.brokers.values():
            conn = self._connections.pop((broker.host, broker.port), None)
            if conn is None:
                continue
            existing = self._connections.get(broker.node_id)
            if existing is None or existing.closed:
                self._connections[broker.node_id] = conn
            else:
                closing = asyncio.ensure_future(conn.close())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)

    # --- coordinators ----------------------------------------------------------------------

    async def coordinator(self, key: str, key_type: int = GROUP) -> int:
        """The node id coordinating a group (``key_type`` 0) or transactional id (1)."""
        cached = self._coordinators.get((key_type, key))
        if cached is not None:
            return cached
        conn = await self.any_connection()
        version = conn.version_for(_FIND_COORDINATOR)
        request_cls = request_type(_FIND_COORDINATOR, version)
        if version >= 4:
            request = request_cls(key_type=key_type, coordinator_keys=(key,))
        elif version >= 1:  # before batching: one key in its own field
            request = request_cls(key_type=key_type, key=key)
        elif key_type == GROUP:
            request = request_cls(key=key)
        else:
            raise RoutingError(f"{conn} cannot find transaction coordinators (FindCoordinator v0)")
        response = await conn.send(request)
        found = response.coordinators[0] if version >= 4 else response
        # v0 has no error_message.
        error = error_for_code(found.error_code, getattr(found, "error_message", None))
        if error is not None:
            raise error
        node_id = int(found.node_id)
        self._coordinators[(key_type, key)] = node_id
        return node_id

    # --- sending ---------------------------------------------------------------------------

    async def send(
        self,
        request: Any,
        *,
        node_id: int | None = None,
        max_version: int | None = None,
        retry: bool = True,
    ) -> Any:
        """Send ``request`` where it belongs (or to ``node_id``), retrying what may succeed.

        It goes at the highest version both sides support, or at most ``max_version``.
        With ``retry=False`` the first retriable error is raised (after the caches it
        invalidates are cleared), for callers that retry themselves and must choose the
        broker again, such as a send pinned to a partition leader that may have moved.
        """
        deadline = time.monotonic() + (self.retry_timeout if retry else 0)
        delays = self.backoff.delays(deadline)
        while True:
            try:
                conn = await self._route(request, node_id)
                version = conn.version_for(request.__api_key__)
                if max_version is not None:
                    version = min(version, max_version)
                held = held_for(request)
                timeout = {"timeout": self.request_timeout + held} if held else {}
                response = await conn.send(convert(request, version), **timeout)
                error = _top_level_error(response)
                if error is None or not error.retriable:
                    return response
                raise error
            except KafkawireError as exc:
                if not exc.retriable:
                    raise
                self._forget(exc, request)
                delay = next(delays, None)
                if delay is None:
                    raise
                _log.debug("retrying %s in %.2fs after %s", type(request).__name__, delay, exc)
                await asyncio.sleep(delay)

    async def send_to_all(self, request: Any) -> dict[int, Any]:
        """Send ``request`` to every broker (for ``every``-routed APIs such as ListGroups)."""
        brokers = list((await self.metadata()).brokers)
        sends = [asyncio.ensure_future(self.send(request, node_id=n)) for n in brokers]
        try:
            responses = await asyncio.gather(*sends)
        except BaseException:
            for send in sends:  # gather leaves the others running when one fails
                send.cancel()
            await asyncio.gather(*sends, return_exceptions=True)
            raise
        return dict(zip(brokers, responses, strict=True))

    def mark_metadata_stale(self) -> None:
        """Make the next :meth:`metadata` call ask a broker again."""
        self._metadata_stale = True

    def _forget(self, error: KafkawireError, request: Any) -> None:
        if getattr(error, "invalid_metadata", False) or isinstance(error, ConnectError):
            self._metadata_stale = True
        lost = isinstance(error, ConnectError | ConnectionClosedError)
        if getattr(error, "invalid_coordinator", False) or lost:
            # A coordinator that cannot be reached may have moved: look it up again too.
            key = coordinator_key(request)
            if key is not None:
                self._coordinators.pop(key, None)

    async def _route(self, request: Any, node_id: int | None) -> Connection:
        if node_id is not None:
            return await self.connection(node_id)
        route = type(request).__route__
        if route == "leader":
            return await self.connection(await self._leader_of(request))
        if route in ("group", "transaction"):
            key = coordinator_key(request)
            if key is not None:
                return await self.connection(await self.coordinator(key[1], key[0]))
            if route == "group":
                raise RoutingError(f"{type(request).__name__} names no group to route by")
            # A transaction-routed request without a transactional id (InitProducerId for an
            # idempotent producer) may go to any broker.
        if route in ("every", "internal"):
            raise RoutingError(
                f"{type(request).__name__} is routed '{route}': use send_to_all() or name node_id"
            )
        return await self.any_connection()

    async def _leader_of(self, request: Any) -> int:
        named = partitions_named(request)
        metadata = await self.metadata([t for t, _ in named if isinstance(t, str)])
        leaders = set()
        for topic, partition in named:
            name = metadata.topic_name(topic) if isinstance(topic, uuid.UUID) else topic
            if name is None:
                self._metadata_stale = True
                raise UnknownTopicIdError(f"topic id {topic} is not in the metadata")
            leaders.add(metadata.leader_for(name, partition))
        if len(leaders) != 1:
            raise RoutingError(
                f"{type(request).__name__} names partitions of {len(leaders)} leaders; "
                "send one request per leader"
            )
        return leaders.pop()


def _metadata_request(topics: Collection[str] | None, version: int) -> Any:
    """A MetadataRequest at ``version`` that asks for ``topics`` and never creates topics."""
    if topics is None and version == 0:
        topics = ()  # v0 has no null: an empty list means every topic
    request = metadata_latest.MetadataRequest(
        topics=None
        if topics is None
        else tuple(metadata_latest.MetadataRequestTopic(name=t) for t in topics),
        allow_auto_topic_creation=False,
    )
    if version < 4:  # before v4 brokers never auto-create on Metadata; the field did not exist
        request = dataclasses.replace(request, allow_auto_topic_creation=True)
    return convert(request, version)


def _top_level_error(response: Any) -> KafkawireError | None:
    code = getattr(response, "error_code", 0)
    return error_for_code(code, getattr(response, "error_message", None)) if code else None
