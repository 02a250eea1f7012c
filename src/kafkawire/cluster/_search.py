"""Which brokers a request that any broker can answer is tried on, in order, and when the
bootstrap addresses come back into it (``metadata.recovery.strategy``, KIP-899 and KIP-1102).

Rules:

- Before any metadata: the bootstrap addresses, best first (see
  :meth:`ConnectionPool.by_preference <._pool.ConnectionPool.by_preference>`).
- With metadata: the brokers it names, best first. With strategy ``"rebootstrap"`` (the
  default, as in Kafka's Java client since 4.0) the bootstrap addresses that are not one of
  theirs follow them: a search that reached none of the known brokers goes on to those (a
  *rebootstrap*, said at INFO once until metadata is found again), as Java rebootstraps once
  no known node is available (librdkafka keeps its bootstrap brokers for good). So a client
  whose metadata names only brokers it cannot reach is not stranded.
- The bootstrap addresses come first instead (a rebootstrap too) when, as in Java's
  ``NetworkClient``, no known broker can be used now (each is in its reconnect backoff, with
  no open connection), or when metadata has been sought without success for longer than the
  trigger (``metadata.recovery.rebootstrap.trigger.ms``, counted from the first attempt of a
  refresh that has not succeeded since, and again from each rebootstrap).
- With strategy ``"none"``, only the known brokers, as before Kafka 4.0.
- Metadata found ends a rebootstrap; its brokers replace the known ones.
- :meth:`BrokerSearch.first_answer` tries them in that order: a broker that cannot be
  connected to, times out or closes the connection is recorded as failing (see
  :mod:`._health`) and the next one is tried; the first answer wins, and it clears the
  broker's failures. When none answers, one :class:`ConnectError` names every failure.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Literal, TypeVar

from kafkawire.errors import ConnectionClosedError
from kafkawire.net import Connection
from kafkawire.net.errors import ConnectError, RequestTimeoutError

from ._pool import Candidate, ConnectionPool
from .metadata import ClusterMetadata

__all__ = ["BrokerSearch", "RecoveryStrategy", "parse_bootstrap"]

_log = logging.getLogger(__name__)

T = TypeVar("T")
RecoveryStrategy = Literal["rebootstrap", "none"]


def parse_bootstrap(bootstrap: str | Sequence[str]) -> list[tuple[str, int]]:
    """``"h1:9092,h2:9092"`` or ``["h1:9092", "[::1]:9092"]`` -> ``[(host, port), ...]``."""
    items = bootstrap.split(",") if isinstance(bootstrap, str) else list(bootstrap)
    addresses = []
    for item in (i.strip() for i in items):
        host, sep, port = item.rpartition(":")
        # ASCII digits only, as Java's [0-9]+: str.isdigit() takes other scripts' digits too
        digits = port.isascii() and port.isdigit()
        if not sep or not host or not digits or not 0 < int(port) < 65536:
            raise ValueError(f"bootstrap address {item!r} is not host:port")
        addresses.append((host.strip("[]"), int(port)))
    if not addresses:
        raise ValueError("no bootstrap addresses")
    return addresses


class BrokerSearch:
    """The order of brokers to try, from the metadata, the pool's health records and the
    bootstrap addresses; and the state of the rebootstrap rule."""

    def __init__(
        self,
        bootstrap: list[tuple[str, int]],
        pool: ConnectionPool,
        *,
        strategy: RecoveryStrategy = "rebootstrap",
        trigger: float = 300.0,
    ) -> None:
        self.bootstrap = bootstrap
        self._pool = pool
        self._strategy = strategy
        self._trigger = trigger
        self._seeking_since: float | None = None  # first refresh not followed by success
        self._rebootstrapping = False

    def candidates(self, metadata: ClusterMetadata | None) -> Iterator[Candidate]:
        """The brokers to try, in order (see the module doc); lazily, so that going on to
        the bootstrap addresses is decided, and said, once the known brokers have failed."""
        bootstrap = [((host, port), host, port) for host, port in self.bootstrap]
        known: list[Candidate] = [
            (b.node_id, b.host, b.port) for b in (metadata.brokers.values() if metadata else ())
        ]
        if not known:
            yield from self._pool.by_preference(bootstrap)
            return
        known = self._pool.by_preference(known)
        addresses = {(host, port) for _, host, port in known}
        others = [c for c in bootstrap if c[1:] not in addresses]
        if self._strategy == "none" or not others:
            yield from known
            return
        if self._rebootstrap_due(known):
            yield from self._pool.by_preference(others)
            yield from known
            return
        yield from known
        self._rebootstrap("none of the brokers the metadata names answered")
        yield from self._pool.by_preference(others)

    async def first_answer(
        self, metadata: ClusterMetadata | None, call: Callable[[Connection], Awaitable[T]]
    ) -> tuple[T, Connection]:
        """``call`` on the best broker's connection; on a retriable failure, the next one's
        (in the order of :meth:`candidates`, the bootstrap addresses included)."""
        failures = []
        for key, host, port in self.candidates(metadata):
            try:
                conn = await self._pool.get(key, host, port, "normal")
            except ConnectError as exc:  # the pool has recorded it
                failures.append(str(exc))
                continue
            try:
                answer = await call(conn)
            except (RequestTimeoutError, ConnectionClosedError, ConnectError) as exc:
                self._pool.failed(key, exc)
                failures.append(str(exc))
                continue
            self._pool.answered(key)
            return answer, conn
        raise ConnectError("no broker answered: " + "; ".join(failures))

    def seeking(self) -> None:
        """A metadata refresh starts (the trigger counts from the first that fails)."""
        if self._seeking_since is None:
            self._seeking_since = time.monotonic()

    def found(self) -> None:
        """Metadata arrived: the trigger stops and any rebootstrap ends."""
        self._seeking_since = None
        if self._rebootstrapping:
            _log.info("metadata found again: back to the brokers it names")
            self._rebootstrapping = False

    def _rebootstrap_due(self, known: list[Candidate]) -> bool:
        now = time.monotonic()
        since = self._seeking_since
        if since is not None and now - since > self._trigger:
            self._seeking_since = now  # counted again from this rebootstrap
            self._rebootstrap(f"no metadata for {self._trigger:.3g} s")
            return True
        if any(self._pool.usable(key) for key, _, _ in known):
            return False
        self._rebootstrap("none of the brokers the metadata names can be reached now")
        return True

    def _rebootstrap(self, why: str) -> None:
        if not self._rebootstrapping:
            self._rebootstrapping = True
            _log.info(
                "rebootstrapping: %s; asking the bootstrap addresses (%s) for metadata",
                why,
                ", ".join(f"{host}:{port}" for host, port in self.bootstrap),
            )
