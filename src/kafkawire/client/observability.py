"""What every client offers of its own workings: ``metrics()``, ``client_instance_id()``
(KIP-714), and the base of ``health()``.

``metrics()`` is a plain method returning ``{group: {name: value}}``, kafka-python's shape,
with Java's group and metric names; a metric with tags has them in its group's key
(``"consumer-fetch-manager-metrics,topic=orders,partition=0"``: :mod:`kafkawire.metrics`).
A health report is a small frozen value: ``healthy``, the ``reasons`` it is not (each one
line), and the facts they come from.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from kafkawire.cluster import Cluster
from kafkawire.operations.telemetry import TelemetryReporter

__all__ = ["ClientHealth", "Observable", "broker_problems"]


class Observable:
    """``metrics()`` and ``client_instance_id()`` of a client with a metrics push."""

    _cluster: Cluster
    _telemetry: TelemetryReporter

    def metrics(self) -> dict[str, dict[str, float]]:
        """The client's metrics now, ``{group: {name: value}}``, with the names of Kafka's
        Java client (``producer-metrics``, ``consumer-fetch-manager-metrics``,
        ``<client>-node-metrics,node-id=node-1``, ...); rates are per second, times in ms,
        an average or maximum with nothing recorded in its windows is NaN. Cheap to call,
        but it measures every metric: not for a per-record loop."""
        return self._cluster.metrics.as_dict()

    async def client_instance_id(self, timeout_ms: int | None = None) -> uuid.UUID | None:
        """The id the brokers gave this client for its pushed metrics (KIP-714; Java's
        ``clientInstanceId``), waiting up to ``timeout_ms`` (default: the client's call
        bound) for the first subscription; ``None`` if none came (no broker serving
        KIP-714). Raises :class:`~kafkawire.errors.TelemetryDisabledError` for a client
        created with ``enable_metrics_push=False``."""
        return await self._telemetry.client_instance_id(
            None if timeout_ms is None else timeout_ms / 1000
        )


@dataclass(frozen=True, slots=True)
class ClientHealth:
    """Whether a client is making progress, why not, and the facts both say."""

    healthy: bool
    """No reason against it."""
    reasons: tuple[str, ...]
    """Why it is not making progress (empty when healthy), one line each."""
    unreachable_brokers: tuple[str, ...]
    """Brokers whose last connects or requests failed, with their failures in a row."""


def broker_problems(cluster: Cluster) -> tuple[tuple[str, ...], list[str]]:
    """The failing brokers described, and the reason they give (none when there are none)."""
    failing = tuple(
        f"{broker}: {count} failures in a row" for broker, count in cluster.failing_brokers()
    )
    return failing, [f"unreachable: {'; '.join(failing)}"] if failing else []
