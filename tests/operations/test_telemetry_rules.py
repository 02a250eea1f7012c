"""KIP-714's rules without a socket: the push's state table (Java's ``ClientTelemetryState``),
metric naming (Java's ``TelemetryMetricNamingConvention``), what a subscription and a broker's
error codes mean (``ClientTelemetryUtils``), and the OTLP payload with delta sums."""

from __future__ import annotations

import uuid

import pytest
from opentelemetry.proto.metrics.v1 import metrics_pb2 as otlp

from kafkawire.cluster.transitions import IllegalTransitionError
from kafkawire.metrics import Measurement, MetricName
from kafkawire.operations.telemetry import (
    TELEMETRY_MOVES,
    Subscription,
    TelemetryState,
    encode_metrics,
    telemetry_name,
)
from kafkawire.operations.telemetry.payload import DeltaLedger
from kafkawire.operations.telemetry.subscription import STOP, error_interval_ms
from kafkawire.records import Compression

S = TelemetryState
# Java's ClientTelemetryState.VALID_NEXT_STATES, written out.
JAVA_MOVES = {
    S.SUBSCRIPTION_NEEDED: {S.SUBSCRIPTION_IN_PROGRESS, S.TERMINATED},
    S.SUBSCRIPTION_IN_PROGRESS: {
        S.PUSH_NEEDED,
        S.SUBSCRIPTION_NEEDED,
        S.TERMINATING_PUSH_NEEDED,
        S.TERMINATED,
    },
    S.PUSH_NEEDED: {
        S.PUSH_IN_PROGRESS,
        S.SUBSCRIPTION_NEEDED,
        S.TERMINATING_PUSH_NEEDED,
        S.TERMINATED,
    },
    S.PUSH_IN_PROGRESS: {
        S.PUSH_NEEDED,
        S.SUBSCRIPTION_NEEDED,
        S.TERMINATING_PUSH_NEEDED,
        S.TERMINATED,
    },
    S.TERMINATING_PUSH_NEEDED: {S.TERMINATING_PUSH_IN_PROGRESS, S.TERMINATED},
    S.TERMINATING_PUSH_IN_PROGRESS: {S.TERMINATED},
    S.TERMINATED: set(),
}


@pytest.mark.parametrize("source", list(S))
@pytest.mark.parametrize("target", list(S))
def test_every_move_is_javas(source: TelemetryState, target: TelemetryState) -> None:
    if target in JAVA_MOVES[source]:
        assert TELEMETRY_MOVES.check(source, target) is target
    else:
        with pytest.raises(IllegalTransitionError):
            TELEMETRY_MOVES.check(source, target)


@pytest.mark.parametrize(
    ("name", "group", "expected"),
    [
        ("request-latency-avg", "producer-node-metrics", "producer.node.request.latency.avg"),
        ("poll-idle-ratio-avg", "consumer-metrics", "consumer.poll.idle.ratio.avg"),
        (
            "fetch-latency-max",
            "consumer-fetch-manager-metrics",
            "consumer.fetch.manager.fetch.latency.max",
        ),
        (
            "assigned-partitions",
            "consumer-coordinator-metrics",
            "consumer.coordinator.assigned.partitions",
        ),
    ],
)
def test_names_follow_javas_convention(name: str, group: str, expected: str) -> None:
    named = telemetry_name(MetricName(name, group, (("node-id", "node-1"),)))
    assert named == f"org.apache.kafka.{expected}"


def subscription(
    requested: tuple[str, ...], compression: tuple[Compression, ...] = ()
) -> Subscription:
    return Subscription(uuid.uuid4(), 7, 1000, compression, True, requested, 1 << 20)


def test_requested_metrics_are_prefixes_star_is_all_and_none_is_nothing() -> None:
    some = subscription(("org.apache.kafka.producer.record.",))
    assert some.selects("org.apache.kafka.producer.record.send.total")
    assert not some.selects("org.apache.kafka.producer.node.request.latency.avg")
    assert subscription(("*",)).selects("anything")
    assert not subscription(()).wants_metrics


def test_compression_is_the_first_accepted_type_not_refused() -> None:
    accepted = (Compression.ZSTD, Compression.LZ4, Compression.GZIP)
    assert subscription(("*",), accepted).compression() is Compression.ZSTD
    assert subscription(("*",), accepted).compression({Compression.ZSTD}) is Compression.LZ4
    assert subscription(("*",)).compression() is Compression.NONE


def test_a_zero_push_interval_is_the_default_and_unknown_compression_types_are_skipped() -> None:
    class Answer:
        client_instance_id = uuid.uuid4()
        subscription_id = 3
        push_interval_ms = 0
        accepted_compression_types = (9, 1)
        delta_temporality = True
        requested_metrics = ("*",)
        telemetry_max_bytes = 100

    read = Subscription.of(Answer())
    assert read.push_interval_ms == 300000
    assert read.accepted_compression == (Compression.GZIP,)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (117, 0),  # UNKNOWN_SUBSCRIPTION_ID: subscribe again at once
        (76, 0),  # UNSUPPORTED_COMPRESSION_TYPE
        (118, 1000),  # TELEMETRY_TOO_LARGE: after the push interval
        (89, 1000),  # THROTTLING_QUOTA_EXCEEDED
        (42, STOP),  # INVALID_REQUEST
        (87, STOP),  # INVALID_RECORD
        (35, STOP),  # UNSUPPORTED_VERSION
        (-1, STOP),  # anything else
    ],
)
def test_error_codes_mean_what_java_says(code: int, expected: int) -> None:
    assert error_interval_ms(code, 1000) == expected


def test_the_payload_has_gauges_and_delta_sums() -> None:
    total = MetricName("record-send-total", "producer-metrics")
    latency = MetricName("request-latency-avg", "producer-node-metrics", (("node-id", "node-1"),))
    ledger = DeltaLedger()

    def push(sent: float, now: int) -> dict[str, otlp.Metric]:
        measurements = [
            Measurement(total, sent, "sum", 100),
            Measurement(latency, 2.5, "gauge", 100),
        ]
        data = otlp.MetricsData.FromString(
            encode_metrics(measurements, labels={"group_id": "g"}, now_ns=now, ledger=ledger)
        )
        (resource,) = data.resource_metrics
        assert resource.resource.attributes[0].key == "group_id"
        return {m.name: m for m in resource.scope_metrics[0].metrics}

    first = push(5, 1000)
    second = push(8, 2000)
    for pushed, value, start, now in ((first, 5, 100, 1000), (second, 3, 1000, 2000)):
        metric = pushed["org.apache.kafka.producer.record.send.total"]
        (point,) = metric.sum.data_points
        assert (point.as_double, point.start_time_unix_nano, point.time_unix_nano) == (
            value,
            start,
            now,
        )
        assert metric.sum.is_monotonic
        assert metric.sum.aggregation_temporality == otlp.AGGREGATION_TEMPORALITY_DELTA
    (gauge,) = second["org.apache.kafka.producer.node.request.latency.avg"].gauge.data_points
    assert gauge.as_double == 2.5
    assert [(kv.key, kv.value.string_value) for kv in gauge.attributes] == [("node_id", "node-1")]
