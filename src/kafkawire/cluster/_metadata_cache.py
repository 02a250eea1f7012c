"""The cluster metadata a client routes by: cached, refreshed when it may be wrong.

Rules:

- The cache is used as it is unless it is marked stale (an error said a leader moved or a
  broker is gone, or a broker was asked for that it does not name), older than
  ``metadata_max_age``, or lacks a topic the caller names; then any broker (see
  :meth:`BrokerSearch.first_answer <._search.BrokerSearch.first_answer>`) is asked again,
  within one bounded call.
- Tasks that find the cache unusable at once share one refresh: each re-checks the cache once
  it holds the lock, so the ones that waited take the answer the first one got.
- A refresh that asks for some topics updates those and keeps the rest; one that asks for
  all replaces them. Each refresh gives a new :class:`ClusterMetadata` (those who derived
  something from the last one can tell by identity, or be told: :meth:`MetadataCache.on_refresh`).
- A broker whose address changed loses its failure record (it is a new place); connections
  opened through a bootstrap address are filed under the node id it turned out to be.
- An answer that names a partition's new leader (KIP-951: NOT_LEADER_OR_FOLLOWER with the
  current leader and its endpoint) updates that partition in place
  (:meth:`MetadataCache.update_leaders`), without a refresh: a new metadata, told to the
  listeners, as old as the one it replaces.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from kafkawire.messages.metadata import v13 as metadata_latest
from kafkawire.net import Connection

from ._deadline import Deadlines
from ._own_requests import metadata_request
from ._pool import ConnectionPool
from ._search import BrokerSearch
from .metadata import BrokerAddress, ClusterMetadata, TopicPartition

__all__ = ["MetadataCache"]

_METADATA = metadata_latest.MetadataRequest.__api_key__


class MetadataCache:
    """The last metadata fetched, and when to fetch it again."""

    def __init__(
        self, search: BrokerSearch, pool: ConnectionPool, deadlines: Deadlines, *, max_age: float
    ) -> None:
        self._search = search
        self._pool = pool
        self._deadlines = deadlines
        self._max_age = max_age
        self._metadata: ClusterMetadata | None = None
        self._stale = True
        self._lock = asyncio.Lock()
        self._listeners: list[Callable[[ClusterMetadata], None]] = []

    @property
    def current(self) -> ClusterMetadata | None:
        """The metadata last fetched, without waiting (``None`` before the first)."""
        return self._metadata

    def on_refresh(self, listener: Callable[[ClusterMetadata], None]) -> None:
        """Call ``listener`` with each new metadata, once it is :attr:`current`."""
        self._listeners.append(listener)

    def mark_stale(self) -> None:
        """Make the next :meth:`get` ask a broker again."""
        self._stale = True

    def update_leaders(
        self, leaders: Mapping[TopicPartition, tuple[int, int]], brokers: Iterable[BrokerAddress]
    ) -> set[TopicPartition]:
        """Take the leaders an answer named (see :meth:`ClusterMetadata.with_leaders`); the
        partitions that now have them."""
        current = self._metadata
        if current is None:
            return set()
        updated, moved = current.with_leaders(leaders, brokers)
        if moved:
            self._metadata = updated
            for listener in self._listeners:
                listener(updated)
        return moved

    async def get(self, topics: Collection[str] = ()) -> ClusterMetadata:
        """The cache if it is usable for ``topics`` (see the module doc), else a refresh."""
        cached = self._usable(topics)
        if cached is not None:
            return cached
        async with self._deadlines.bounded("Metadata", self._deadlines.deadline()), self._lock:
            cached = self._usable(topics)
            return cached or await self._refresh(topics or None)

    async def refresh(
        self, topics: Collection[str] | None = None, *, auto_create: bool = False
    ) -> ClusterMetadata:
        """Ask a broker for the brokers and ``topics`` (all when ``None``), creating those it
        lacks with ``auto_create`` where the broker is configured to."""
        async with self._deadlines.bounded("Metadata", self._deadlines.deadline()), self._lock:
            return await self._refresh(topics, auto_create=auto_create)

    def _usable(self, topics: Collection[str]) -> ClusterMetadata | None:
        cached = self._metadata
        if (
            cached is None
            or self._stale
            or cached.age() > self._max_age
            or any(t not in cached.topics for t in topics)
        ):
            return None
        return cached

    async def _refresh(
        self, topics: Collection[str] | None, *, auto_create: bool = False
    ) -> ClusterMetadata:
        """The refresh itself; the caller holds the lock."""

        async def ask(conn: Connection) -> Any:
            request = metadata_request(topics, conn.version_for(_METADATA), auto_create=auto_create)
            return await conn.send(request, timeout=self._deadlines.timeout())

        self._search.seeking()
        response, _ = await self._search.first_answer(self._metadata, ask)
        self._search.found()
        fresh = ClusterMetadata.from_response(response)
        before = self._metadata.brokers if self._metadata is not None else {}
        if topics is not None and self._metadata is not None:
            merged = {**self._metadata.topics, **fresh.topics}
            fresh = dataclasses.replace(fresh, topics=merged)
        self._metadata, self._stale = fresh, False
        for listener in self._listeners:
            listener(fresh)
        for broker in fresh.brokers.values():
            old = before.get(broker.node_id)
            if old is not None and (old.host, old.port) != (broker.host, broker.port):
                self._pool.moved(broker.node_id)
            self._pool.adopt((broker.host, broker.port), broker.node_id)
        return fresh
