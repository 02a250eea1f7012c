"""Where a request goes: the broker its class's ``__route__`` names, and the connection there.

Rules:

- ``leader``: the leader of the partitions the request names (found by :mod:`._routing`);
  partitions of several leaders are a :class:`RoutingError` (one request per leader).
  A partition the metadata says does not exist is asked about once more (partitions may have
  been added) and then fails with :class:`InvalidPartitionError`; an unknown topic, or one
  without a leader, raises a retriable error, which the call waits out with refreshes.
- ``group`` and ``transaction``: the coordinator of the one group or transactional id the
  request names (batched forms such as OffsetFetch v8+ too). A group-routed request that names
  none is a :class:`RoutingError`; a transaction-routed one (InitProducerId of an idempotent
  producer) may go anywhere.
- ``every`` and ``internal``: only to a broker the caller names (``send_to_all`` for every
  broker); else a :class:`RoutingError`.
- Anything else: the best placed broker (:mod:`._search`); a retry picks the next best.
- On its broker a request takes the connection of its purpose (:mod:`._pool`), so a long poll
  never holds up produce or heartbeats.
- What an error says of where requests go: one that means stale metadata (or a broker that
  could not be reached) marks the metadata stale; a coordinator error, or failing to reach
  the coordinator, forgets the coordinator. :meth:`Router.forget` applies both.
"""

from __future__ import annotations

import uuid
from typing import Any

from kafkawire.errors import ConnectionClosedError, KafkawireError, UnknownTopicIdError
from kafkawire.net import Connection
from kafkawire.net.errors import ConnectError

from ._coordinators import CoordinatorCache
from ._metadata_cache import MetadataCache
from ._pool import ConnectionPool, NodeKey, Purpose, purpose_of
from ._routing import InvalidPartitionError, RoutingError, coordinator_key, partitions_named
from ._search import BrokerSearch
from .metadata import ClusterMetadata

__all__ = ["Router"]


class Router:
    """The broker and connection of each request, from the metadata and coordinator caches."""

    def __init__(
        self,
        pool: ConnectionPool,
        search: BrokerSearch,
        metadata: MetadataCache,
        coordinators: CoordinatorCache,
    ) -> None:
        self._pool = pool
        self._search = search
        self._metadata = metadata
        self._coordinators = coordinators

    async def connection(self, node_id: int, purpose: Purpose = "normal") -> Connection:
        """The connection to broker ``node_id`` for ``purpose`` (opened on first use)."""
        broker = (await self._metadata.get()).brokers.get(node_id)
        if broker is None:
            self._metadata.mark_stale()
            raise ConnectError(f"broker {node_id} is not in the cluster metadata")
        return await self._pool.get(node_id, broker.host, broker.port, purpose)

    async def route(self, request: Any, node_id: int | None) -> tuple[NodeKey, Connection]:
        """The broker ``request`` goes to (``node_id`` if given) and the connection of its
        purpose there."""
        purpose = purpose_of(type(request))
        if node_id is None:
            node_id = await self._node_for(request)
        if node_id is not None:
            return node_id, await self.connection(node_id, purpose)
        # Any broker: the best placed one; if it fails, the retry picks another.
        key, host, port = next(self._search.candidates(self._metadata.current))
        return key, await self._pool.get(key, host, port, purpose)

    def forget(self, error: KafkawireError, request: Any) -> None:
        """Clear what ``error``, raised for ``request``, says is no longer true."""
        if getattr(error, "invalid_metadata", False) or isinstance(error, ConnectError):
            self._metadata.mark_stale()
        lost = isinstance(error, ConnectError | ConnectionClosedError)
        if getattr(error, "invalid_coordinator", False) or lost:
            # A coordinator that cannot be reached may have moved: look it up again too.
            key = coordinator_key(request)
            if key is not None:
                self._coordinators.forget(key)

    async def _node_for(self, request: Any) -> int | None:
        """The node id ``request`` must go to, or ``None`` if any broker will do."""
        route = type(request).__route__
        if route == "leader":
            return await self._leader_of(request)
        if route in ("group", "transaction"):
            key = coordinator_key(request)
            if key is not None:
                return await self._coordinators.node_for(key[1], key[0])
            if route == "group":
                raise RoutingError(f"{type(request).__name__} names no group to route by")
            # A transaction-routed request without a transactional id (InitProducerId for an
            # idempotent producer) may go to any broker.
        if route in ("every", "internal"):
            raise RoutingError(
                f"{type(request).__name__} is routed '{route}': use send_to_all() or name node_id"
            )
        return None

    async def _leader_of(self, request: Any) -> int:
        named = partitions_named(request)
        topics = [t for t, _ in named if isinstance(t, str)]
        metadata = await self._metadata.get(topics)
        try:
            leaders = self._leaders(metadata, named)
        except InvalidPartitionError:
            # Partitions may have been added since the cache was filled: ask once more.
            leaders = self._leaders(await self._metadata.refresh(topics), named)
        if len(leaders) != 1:
            raise RoutingError(
                f"{type(request).__name__} names partitions of {len(leaders)} leaders; "
                "send one request per leader"
            )
        return leaders.pop()

    def _leaders(
        self, metadata: ClusterMetadata, named: list[tuple[str | uuid.UUID, int]]
    ) -> set[int]:
        leaders = set()
        for topic, partition in named:
            name = metadata.topic_name(topic) if isinstance(topic, uuid.UUID) else topic
            if name is None:
                self._metadata.mark_stale()
                raise UnknownTopicIdError(f"topic id {topic} is not in the metadata")
            leaders.add(metadata.leader_for(name, partition))
        return leaders
