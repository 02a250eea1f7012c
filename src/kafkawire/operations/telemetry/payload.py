"""The OTLP ``MetricsData`` a PushTelemetry carries, from a client's measurements.

Encoded with the ``opentelemetry-proto`` package (imported here, on the first push: it
costs about 30 ms, which a client whose broker asks for no metrics never pays). As Java's
``KafkaMetricsCollector``: cumulative sums and counts go as monotonic sums, every other
metric as a gauge, each one data point of a double, stamped now, its tags as attributes;
with delta temporality (what Kafka's brokers ask for) a sum carries what it gained since the
last push, starting then. The resource carries the client's labels (Java's
``ClientTelemetryProvider``: ``group_id``, ``transactional_id``, ...). Java puts each metric
in a resource of its own; here one resource and one scope hold them all, which OTLP reads
the same and is smaller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkawire.metrics import Measurement, MetricName

from .naming import attributes, telemetry_name

__all__ = ["DeltaLedger", "encode_metrics"]

SCOPE = "kafkawire"


@dataclass
class DeltaLedger:
    """What each sum was at the last push, and when (Java's ``LastValueTracker``)."""

    last: dict[MetricName, tuple[float, int]] = field(default_factory=dict)

    def delta(self, measurement: Measurement, now_ns: int) -> tuple[float, int]:
        """The gain of a sum since the last push and when that was (the first time: all of
        it, since the metric began)."""
        previous = self.last.get(measurement.name)
        self.last[measurement.name] = (measurement.value, now_ns)
        if previous is None:
            return measurement.value, measurement.start_unix_nano
        return measurement.value - previous[0], previous[1]


def encode_metrics(
    measurements: Iterable[Measurement],
    *,
    labels: Mapping[str, str],
    now_ns: int,
    ledger: DeltaLedger | None,
) -> bytes:
    """Serialized ``MetricsData`` of ``measurements`` (already selected); ``ledger`` for
    delta temporality, ``None`` for cumulative."""
    from opentelemetry.proto.common.v1.common_pb2 import (
        AnyValue,
        InstrumentationScope,
        KeyValue,
    )
    from opentelemetry.proto.metrics.v1 import metrics_pb2 as otlp
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource

    def key_values(pairs: Mapping[str, str]) -> list[Any]:
        return [KeyValue(key=k, value=AnyValue(string_value=v)) for k, v in pairs.items()]

    metrics = []
    for m in measurements:
        point = otlp.NumberDataPoint(
            attributes=key_values(attributes(m.name)), time_unix_nano=now_ns, as_double=m.value
        )
        metric = otlp.Metric(name=telemetry_name(m.name), description=m.name.description)
        if m.kind == "gauge":
            metric.gauge.data_points.append(point)
        else:
            if ledger is None:
                point.start_time_unix_nano = m.start_unix_nano
                temporality = otlp.AGGREGATION_TEMPORALITY_CUMULATIVE
            else:
                point.as_double, point.start_time_unix_nano = ledger.delta(m, now_ns)
                temporality = otlp.AGGREGATION_TEMPORALITY_DELTA
            metric.sum.data_points.append(point)
            metric.sum.is_monotonic = True
            metric.sum.aggregation_temporality = temporality
        metrics.append(metric)
    data = otlp.MetricsData(
        resource_metrics=[
            otlp.ResourceMetrics(
                resource=Resource(attributes=key_values(labels)),
                scope_metrics=[
                    otlp.ScopeMetrics(scope=InstrumentationScope(name=SCOPE), metrics=metrics)
                ],
            )
        ]
    )
    return bytes(data.SerializeToString())
