"""KIP-714 end to end on the fake cluster: producers, consumers and admin clients subscribe,
push OTLP payloads the test decodes (KIP-714's required metric names, one terminating push on
close), and follow the broker's error codes."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from opentelemetry.proto.metrics.v1.metrics_pb2 import MetricsData

from kafkawire.admin import Admin
from kafkawire.consumer import Consumer
from kafkawire.errors import TelemetryDisabledError
from kafkawire.producer import Producer
from kafkawire.testing.fake import FakeCluster, HookContext
from kafkawire.testing.fake.build import build, response_class
from kafkawire.testing.fake.telemetry import TelemetryPush
from tests.consumer.helpers import eventually

from .kip714 import CONSUMER_REQUIRED, PRODUCER_REQUIRED

PUSH_TELEMETRY = 72


def decoded(push: TelemetryPush) -> tuple[dict[str, Any], dict[str, str]]:
    """The pushed metrics by name, and the resource's labels."""
    data = MetricsData.FromString(push.metrics)
    (resource,) = data.resource_metrics
    labels = {kv.key: kv.value.string_value for kv in resource.resource.attributes}
    metrics = {m.name: m for scope in resource.scope_metrics for m in scope.metrics}
    return metrics, labels


def pushes_of(cluster: FakeCluster, instance: uuid.UUID | None) -> list[TelemetryPush]:
    return [p for p in cluster.telemetry.pushes if p.client_instance_id == instance]


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    async with FakeCluster(client_telemetry=True) as cluster:
        cluster.create_topic("t", 2)
        cluster.telemetry.set_subscription("all", metrics=["org.apache.kafka."], interval_ms=100)
        yield cluster


async def test_a_producer_pushes_the_required_metrics_and_one_last_push(
    cluster: FakeCluster,
) -> None:
    async with Producer(cluster.bootstrap, transactional_id=None, linger_ms=0) as producer:
        for _ in range(5):
            await producer.send_and_wait("t", b"v", partition=0)
        instance = await producer.client_instance_id()
        assert instance is not None
        await eventually(lambda: len(pushes_of(cluster, instance)) >= 2)
    pushes = pushes_of(cluster, instance)
    assert [p.terminating for p in pushes] == [False] * (len(pushes) - 1) + [True]
    assert {p.compression_type for p in pushes} == {4}  # zstd: the first the broker accepts
    metrics, _ = decoded(pushes[-1])
    assert set(metrics) >= PRODUCER_REQUIRED
    assert all(name.startswith("org.apache.kafka.producer.") for name in metrics)
    # Sums go as deltas (Kafka's brokers ask for them): together, every record sent.
    sent = [
        point.as_double
        for push in pushes
        for point in decoded(push)[0]["org.apache.kafka.producer.record.send.total"].sum.data_points
    ]
    assert sum(sent) == 5
    latency = metrics["org.apache.kafka.producer.node.request.latency.max"].gauge.data_points
    assert {kv.key for point in latency for kv in point.attributes} == {"node_id"}


async def test_a_consumer_pushes_its_required_metrics_with_its_group_labels(
    cluster: FakeCluster,
) -> None:
    cluster.produce("t", 0, [b"a", b"b"])
    async with Consumer(
        "t",
        bootstrap_servers=cluster.bootstrap,
        group_id="g",
        group_protocol="consumer",
        auto_offset_reset="earliest",
        fetch_max_wait_ms=50,
    ) as consumer:
        got = 0
        while got < 2:
            got += sum(map(len, (await consumer.getmany(timeout_ms=100)).values()))
        await consumer.commit()
        instance = await consumer.client_instance_id()
        await eventually(lambda: len(pushes_of(cluster, instance)) >= 2)
    pushes = pushes_of(cluster, instance)
    assert [p.terminating for p in pushes] == [False] * (len(pushes) - 1) + [True]
    metrics, labels = decoded(pushes[-1])
    assert set(metrics) >= CONSUMER_REQUIRED
    assert labels["group_id"] == "g"
    assert labels["group_member_id"]


async def test_the_client_subscribes_again_when_the_subscription_changes(
    cluster: FakeCluster,
) -> None:
    async with Producer(cluster.bootstrap) as producer:
        instance = await producer.client_instance_id()
        await eventually(lambda: bool(pushes_of(cluster, instance)))
        first = pushes_of(cluster, instance)[0].subscription_id
        cluster.telemetry.set_subscription(
            "all", metrics=["org.apache.kafka.producer.record."], interval_ms=100
        )  # the next push is UNKNOWN_SUBSCRIPTION_ID
        await eventually(lambda: pushes_of(cluster, instance)[-1].subscription_id != first)
    metrics, _ = decoded(pushes_of(cluster, instance)[-1])
    assert metrics
    assert all(m.startswith("org.apache.kafka.producer.record.") for m in metrics)


def refuse_push(code: int) -> Callable[[Any, HookContext], Any]:
    def hook(request: Any, ctx: HookContext) -> Any:
        return build(response_class(PUSH_TELEMETRY, ctx.api_version), error_code=code)

    return hook


async def test_a_refused_compression_type_is_not_used_again(cluster: FakeCluster) -> None:
    cluster.control(refuse_push(76), api_key=PUSH_TELEMETRY)  # UNSUPPORTED_COMPRESSION_TYPE
    async with Producer(cluster.bootstrap) as producer:
        instance = await producer.client_instance_id()
        await eventually(lambda: bool(pushes_of(cluster, instance)))
    assert {p.compression_type for p in pushes_of(cluster, instance)} == {3}  # lz4, the next


async def test_a_push_too_large_waits_for_the_interval_and_subscribes_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with FakeCluster(client_telemetry=True, client_telemetry_max_bytes=10) as cluster:
        cluster.telemetry.set_subscription("all", metrics=["*"], interval_ms=100)

        def asked(api_key: int) -> int:
            return sum(1 for r in cluster.requests if r.api_key == api_key)

        with caplog.at_level(logging.INFO, logger="kafkawire"):
            async with Producer(cluster.bootstrap) as producer:
                await eventually(lambda: asked(PUSH_TELEMETRY) >= 2 and asked(71) >= 3)
                assert producer.health().healthy
        assert cluster.telemetry.pushes == []  # every one refused: TELEMETRY_TOO_LARGE
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_no_subscribed_metrics_means_no_push_even_on_close(cluster: FakeCluster) -> None:
    cluster.telemetry.remove_subscription("all")
    async with Producer(cluster.bootstrap) as producer:
        assert await producer.client_instance_id() is not None
    assert cluster.telemetry.pushes == []
    assert not [r for r in cluster.requests if r.api_key == PUSH_TELEMETRY]


async def test_the_admin_client_pushes_only_when_asked_to(cluster: FakeCluster) -> None:
    async with Admin(cluster.bootstrap) as admin:
        with pytest.raises(TelemetryDisabledError, match="enable_metrics_push=True"):
            await admin.client_instance_id()
    async with Admin(cluster.bootstrap, enable_metrics_push=True) as admin:
        await admin.list_topics()
        instance = await admin.client_instance_id()
        await eventually(lambda: bool(pushes_of(cluster, instance)))
    pushes = pushes_of(cluster, instance)
    assert pushes[-1].terminating
    assert "org.apache.kafka.admin.client.connection.creation.total" in decoded(pushes[-1])[0]


async def test_a_broker_without_telemetry_gets_no_request_and_no_log_noise(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with FakeCluster() as cluster:
        cluster.create_topic("t")
        with caplog.at_level(logging.INFO, logger="kafkawire"):
            async with Producer(cluster.bootstrap) as producer:
                await producer.send_and_wait("t", b"v")
                assert await producer.client_instance_id(timeout_ms=5000) is None
        assert not [r for r in cluster.requests if r.api_key in (71, 72)]
    assert not [r for r in caplog.records if "telemetry" in r.name]


async def test_an_unexpected_error_in_the_push_is_logged_and_the_client_goes_on(
    cluster: FakeCluster, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("a bug in the payload")

    monkeypatch.setattr("kafkawire.operations.telemetry.reporter.encode_metrics", broken)
    async with Producer(cluster.bootstrap) as producer:
        await eventually(
            lambda: any("metrics push (KIP-714) stopped" in r.getMessage() for r in caplog.records)
        )
        await producer.send_and_wait("t", b"still works")
        assert producer.health().healthy
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    (error,) = errors
    assert error.exc_info is not None
    assert not [r for r in cluster.requests if r.api_key == PUSH_TELEMETRY]
