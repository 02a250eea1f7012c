"""What the cluster layer records in its client's metrics: connections made, and each
broker's request latencies (the part of Java's ``Selector`` metrics KIP-714 asks for).

- ``<prefix>-metrics``: ``connection-creation-rate`` and ``connection-creation-total``
  (connections that opened, ApiVersions and authentication done), ``connection-count`` (open
  now).
- ``<prefix>-node-metrics`` with tag ``node-id=node-<id>``: ``request-latency-avg`` and
  ``request-latency-max`` (ms from sending a request to its answer, a long poll's wait
  included, as Java counts it), made on the first answer from each broker. A bootstrap
  address before the metadata names its broker counts as node -1, -2, ... in the order it
  answers, as Java numbers bootstrap nodes.

``prefix`` is the client's, as Java's ``metricGrpPrefix``: ``producer``, ``consumer``,
``admin-client``, and ``kafka-client`` for :class:`~kafkawire.client.KafkaClient`.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkawire.metrics import Avg, CumulativeSum, Max, MetricName, Metrics, Rate, Sensor

__all__ = ["ConnectionMetrics"]

NodeKey = int | tuple[str, int]


class ConnectionMetrics:
    """The sensors of one cluster's connections and requests."""

    def __init__(self, metrics: Metrics, prefix: str, open_connections: Callable[[], int]) -> None:
        self._metrics = metrics
        self._node_group = f"{prefix}-node-metrics"
        group = f"{prefix}-metrics"
        self._created = metrics.sensor("connections-created")
        self._created.add(
            MetricName("connection-creation-rate", group, (), "connections opened per second"),
            Rate(),
        )
        self._created.add(
            MetricName("connection-creation-total", group, (), "connections opened"),
            CumulativeSum(),
        )
        metrics.add_gauge(
            MetricName("connection-count", group, (), "connections open now"), open_connections
        )
        self._nodes: dict[NodeKey, Sensor] = {}
        self._bootstrap_ids: dict[tuple[str, int], int] = {}

    def connection_created(self) -> None:
        self._created.record()

    def answered(self, key: NodeKey, latency_ms: float) -> None:
        """Broker ``key`` answered a request ``latency_ms`` after it was sent."""
        sensor = self._nodes.get(key)
        if sensor is None:
            sensor = self._nodes[key] = self._node_sensor(key)
        sensor.record(latency_ms)

    def _node_sensor(self, key: NodeKey) -> Sensor:
        if isinstance(key, tuple):
            node_id = self._bootstrap_ids.setdefault(key, -1 - len(self._bootstrap_ids))
        else:
            node_id = key
        tags = (("node-id", f"node-{node_id}"),)
        sensor = self._metrics.sensor(f"node-{node_id}.latency")
        sensor.add(MetricName("request-latency-avg", self._node_group, tags), Avg())
        sensor.add(MetricName("request-latency-max", self._node_group, tags), Max())
        return sensor
