"""Client metrics (KIP-714) in the fake cluster, by the rules of Kafka's ``ClientMetricsManager``.

A Kafka broker lists GetTelemetrySubscriptions and PushTelemetry in ApiVersions only when a
telemetry exporter plugin is configured; here ``FakeConfig.client_telemetry`` says so, and the
fake is its own exporter: every push it accepts is kept, decompressed, in :attr:`pushes` (the
OTLP ``MetricsData`` bytes, for a test to decode).

- Subscriptions are Kafka's ``client-metrics`` config resources: a name, metric name prefixes
  (``"*"``: all), a push interval (100 ms to an hour, default 5 minutes) and match patterns
  (regular expressions, all of which must match a client's ``client_id``,
  ``client_instance_id``, ``client_software_name``, ``client_software_version`` or
  ``client_source_address``; none: every client). :meth:`ClientMetrics.set_subscription` and
  :meth:`~ClientMetrics.remove_subscription` change them; after a change each client instance
  is made anew at its next request (a new subscription id, its request times forgotten).
- A client instance is kept per broker (each Kafka broker has its own manager), made at its
  first request to that broker: the subscriptions that match it, their metric prefixes
  together (just ``"*"`` if one asks for all), the shortest of their intervals, and a
  subscription id derived from those and the instance id (CRC-32C, as Kafka computes it), so
  every broker gives a client the same id.
- GetTelemetrySubscriptions: the zero id asks for a new instance id. One that comes sooner than
  the push interval after the instance's last request is THROTTLING_QUOTA_EXCEEDED, unless
  the last push failed with UNKNOWN_SUBSCRIPTION_ID or UNSUPPORTED_COMPRESSION_TYPE. The answer
  accepts zstd, lz4, gzip and snappy, in that order (``FakeConfig.client_telemetry_compression``),
  with delta temporality and ``FakeConfig.client_telemetry_max_bytes``.
- PushTelemetry, checked in Kafka's order: the zero id is INVALID_REQUEST; a push after the
  instance's terminating one is INVALID_REQUEST; one sooner than the push interval after the
  last push is THROTTLING_QUOTA_EXCEEDED, unless it is terminating or the first since a
  subscription; another subscription id is UNKNOWN_SUBSCRIPTION_ID; a compression type Kafka
  does not know is UNSUPPORTED_COMPRESSION_TYPE; metrics larger than the maximum, compressed
  or not, TELEMETRY_TOO_LARGE; metrics that do not decompress INVALID_RECORD.

Not modelled: the instance cache's expiry and size bound, and forgetting an instance when its
connection closes (a client then gets a new instance at its next request either way).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import crc32c

from kafkawire.records import Compression, DecompressionLimitError, RecordsError, decompress

from .codes import Error
from .config import FakeConfig

__all__ = ["TELEMETRY_APIS", "ClientMetrics", "TelemetryPush", "TelemetrySubscription"]

TELEMETRY_APIS = frozenset({71, 72})  # GetTelemetrySubscriptions, PushTelemetry

_ZERO = uuid.UUID(int=0)
_ALL = "*"
DEFAULT_INTERVAL_MS = 5 * 60 * 1000
_INTERVALS = range(100, 3600000 + 1)  # what Kafka's ClientMetricsConfigs accepts
_MATCHED = frozenset(
    {
        "client_instance_id",
        "client_id",
        "client_software_name",
        "client_software_version",
        "client_source_address",
        "client_source_port",
    }
)
_RESUBSCRIBE = frozenset({Error.UNKNOWN_SUBSCRIPTION_ID, Error.UNSUPPORTED_COMPRESSION_TYPE})


@dataclass(frozen=True)
class TelemetrySubscription:
    """One ``client-metrics`` resource."""

    name: str
    metrics: tuple[str, ...]
    interval_ms: int
    match: Mapping[str, re.Pattern[str]]

    def matches(self, attributes: Mapping[str, str | None]) -> bool:
        return all(
            (value := attributes.get(key)) is not None and pattern.fullmatch(value) is not None
            for key, pattern in self.match.items()
        )


@dataclass(frozen=True)
class TelemetryPush:
    """A push the fake accepted."""

    node_id: int
    client_instance_id: uuid.UUID
    subscription_id: int
    terminating: bool
    compression_type: int
    metrics: bytes
    """The OTLP ``MetricsData``, decompressed."""


@dataclass
class _Instance:
    client_instance_id: uuid.UUID
    version: int  # of the subscriptions it was evaluated against
    attributes: dict[str, str | None]
    metrics: tuple[str, ...]
    interval_ms: int
    subscription_id: int
    last_get_ms: float = -float("inf")
    last_push_ms: float = -float("inf")
    terminating: bool = False
    last_error: Error = Error.NONE


@dataclass
class ClientMetrics:
    """The subscriptions, each broker's client instances and the pushes received."""

    config: FakeConfig
    subscriptions: dict[str, TelemetrySubscription] = field(default_factory=dict)
    pushes: list[TelemetryPush] = field(default_factory=list)
    software: dict[tuple[int, int], tuple[str, str]] = field(default_factory=dict)
    """What each connection's ApiVersions named: ``(node, connection) -> (name, version)``."""
    _instances: dict[int, dict[uuid.UUID, _Instance]] = field(default_factory=dict)
    _version: int = 0

    # -- subscriptions -----------------------------------------------------------------------

    def set_subscription(
        self,
        name: str,
        *,
        metrics: Iterable[str],
        interval_ms: int = DEFAULT_INTERVAL_MS,
        match: Mapping[str, str] | None = None,
    ) -> None:
        """Add or replace the subscription ``name`` (``ValueError`` for what Kafka refuses)."""
        if not name:
            raise ValueError("a client metrics subscription needs a name")
        if interval_ms not in _INTERVALS:
            raise ValueError(f"interval_ms must be between 100 and 3600000, not {interval_ms}")
        unknown = set(match or {}) - _MATCHED
        if unknown:
            raise ValueError(
                f"unknown client match keys {sorted(unknown)}; known: {sorted(_MATCHED)}"
            )
        patterns = {key: re.compile(value) for key, value in (match or {}).items()}
        self.subscriptions[name] = TelemetrySubscription(
            name, tuple(metrics), interval_ms, patterns
        )
        self._version += 1

    def remove_subscription(self, name: str) -> None:
        if self.subscriptions.pop(name, None) is not None:
            self._version += 1

    # -- the two requests ----------------------------------------------------------------------

    def get_subscriptions(
        self, node_id: int, asked: uuid.UUID, attributes: dict[str, str | None], now_ms: float
    ) -> tuple[Error, _Instance]:
        instance_id = asked if asked != _ZERO else self._new_id(node_id)
        instance = self._instance(node_id, instance_id, attributes)
        if not self._since_last(instance, now_ms) and instance.last_error not in _RESUBSCRIBE:
            return Error.THROTTLING_QUOTA_EXCEEDED, instance
        instance.last_get_ms = now_ms
        instance.last_error = Error.NONE
        return Error.NONE, instance

    def push(
        self, node_id: int, request: Any, attributes: dict[str, str | None], now_ms: float
    ) -> Error:
        if request.client_instance_id == _ZERO:
            return Error.INVALID_REQUEST
        instance = self._instance(node_id, request.client_instance_id, attributes)
        error = self._check_push(instance, request, now_ms)
        instance.terminating = request.terminating
        if error is Error.NONE:
            error, metrics = self._decompressed(request)
            if error is Error.NONE and metrics:
                self.pushes.append(
                    TelemetryPush(
                        node_id,
                        instance.client_instance_id,
                        request.subscription_id,
                        request.terminating,
                        request.compression_type,
                        metrics,
                    )
                )
        instance.last_error = error
        return error

    # -- rules -----------------------------------------------------------------------------------

    def _check_push(self, instance: _Instance, request: Any, now_ms: float) -> Error:
        if instance.terminating:
            return Error.INVALID_REQUEST
        # The first push after a subscription may come early: the client staggers it.
        early = instance.last_get_ms <= instance.last_push_ms and (
            now_ms - instance.last_push_ms < instance.interval_ms
        )
        if early and not request.terminating:
            return Error.THROTTLING_QUOTA_EXCEEDED
        instance.last_push_ms = now_ms
        if request.subscription_id != instance.subscription_id:
            return Error.UNKNOWN_SUBSCRIPTION_ID
        if request.compression_type not in {c.value for c in Compression}:
            return Error.UNSUPPORTED_COMPRESSION_TYPE
        if len(request.metrics) > self.config.client_telemetry_max_bytes:
            return Error.TELEMETRY_TOO_LARGE
        return Error.NONE

    def _decompressed(self, request: Any) -> tuple[Error, bytes]:
        limit = self.config.client_telemetry_max_bytes
        try:
            data = decompress(Compression(request.compression_type), request.metrics, limit=limit)
        except DecompressionLimitError:
            return Error.TELEMETRY_TOO_LARGE, b""
        except RecordsError:  # what Kafka's exporter cannot read
            return Error.INVALID_RECORD, b""
        return Error.NONE, data

    @staticmethod
    def _since_last(instance: _Instance, now_ms: float) -> bool:
        last = max(instance.last_get_ms, instance.last_push_ms)
        return now_ms - last >= instance.interval_ms

    def _new_id(self, node_id: int) -> uuid.UUID:
        known = self._instances.get(node_id, {})
        while (found := uuid.uuid4()) in known or found == _ZERO:
            pass
        return found

    def _instance(
        self, node_id: int, instance_id: uuid.UUID, attributes: dict[str, str | None]
    ) -> _Instance:
        """The broker's instance ``instance_id``, made anew (as Kafka does: request times,
        last error and terminating flag forgotten) when the subscriptions changed since."""
        instances = self._instances.setdefault(node_id, {})
        instance = instances.get(instance_id)
        if instance is not None and instance.version == self._version:
            return instance
        made = self._evaluate(instance_id, instance.attributes if instance else attributes)
        instances[instance_id] = made
        return made

    def _evaluate(self, instance_id: uuid.UUID, attributes: dict[str, str | None]) -> _Instance:
        attributes = {**attributes, "client_instance_id": str(instance_id)}
        matching = [s for s in self.subscriptions.values() if s.matches(attributes)]
        metrics = {m for s in matching for m in s.metrics}
        if _ALL in metrics:
            metrics = {_ALL}
        interval = min((s.interval_ms for s in matching), default=DEFAULT_INTERVAL_MS)
        ordered = tuple(sorted(metrics))
        digest = crc32c.crc32c(f"{list(ordered)}{interval}".encode())
        subscription_id = _int32(digest ^ _java_hash(instance_id))
        return _Instance(instance_id, self._version, attributes, ordered, interval, subscription_id)


def _java_hash(value: uuid.UUID) -> int:
    """Java's ``Uuid.hashCode``: the two halves XORed, then the 64 bits folded to 32."""
    bits = (value.int >> 64) ^ (value.int & (1 << 64) - 1)
    return ((bits >> 32) ^ bits) & 0xFFFFFFFF


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value
