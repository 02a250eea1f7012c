"""``ShareConsumer.metrics()`` with the groups and names of Java's share consumer
(``consumer-share-fetch-manager-metrics``, ``consumer-share-metrics``,
``consumer-share-coordinator-metrics``, and the network's ``consumer-metrics`` and
``consumer-node-metrics``), and its KIP-714 push, as the consumer's: on the fake cluster, and
decoded by librdkafka's mock."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator

import pytest
from opentelemetry.proto.metrics.v1.metrics_pb2 import MetricsData

from kafkawire.consumer import ShareConsumer
from kafkawire.errors import TelemetryDisabledError
from kafkawire.testing import MockCluster
from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.fake.telemetry import TelemetryPush
from tests.operations.kip714 import CONSUMER_REQUIRED

from .helpers import consume, fake_member, fake_topic, fresh
from .scripted import refuse_acks

FETCH = "consumer-share-fetch-manager-metrics"
SHARE = "consumer-share-metrics"
COORDINATOR = "consumer-share-coordinator-metrics"
SHARE_ACKNOWLEDGE, PUSH = 79, 72
# The network's, as every consumer's, and the share consumer's own.
SHARE_REQUIRED = {m for m in CONSUMER_REQUIRED if ".connection." in m or ".node." in m} | {
    f"org.apache.kafka.consumer.share.{name}"
    for name in (
        "poll.idle.ratio.avg",
        "fetch.manager.fetch.latency.avg",
        "fetch.manager.fetch.latency.max",
        "fetch.manager.acknowledgements.send.total",
        "coordinator.heartbeat.total",
    )
}


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    async with FakeCluster(share_group_heartbeat_interval_ms=50, client_telemetry=True) as cluster:
        yield cluster


async def test_metrics_have_javas_groups_and_count_fetches_acknowledgements_and_polls(
    cluster: FakeCluster,
) -> None:
    group = fresh("group")
    topic = fake_topic(cluster, b"a", b"b", b"c")
    async with fake_member(cluster, topic, group) as consumer:
        await consume(consumer, 3)
        await consumer.commit()
        metrics = consumer.metrics()
    fetch, share, coordinator = metrics[FETCH], metrics[SHARE], metrics[COORDINATOR]
    assert fetch["records-consumed-total"] == 3
    assert fetch["records-per-request-max"] == 3  # one answer acquired them all
    assert fetch["bytes-consumed-total"] > 0
    assert fetch["fetch-total"] >= 1
    assert fetch["fetch-latency-max"] >= 0
    assert fetch["acknowledgements-send-total"] == 3
    assert fetch["acknowledgements-error-total"] == 0
    assert {"fetch-throttle-time-avg", "fetch-throttle-time-max"} <= set(fetch)
    assert share["time-between-poll-max"] >= 0
    assert 0 <= share["poll-idle-ratio-avg"] <= 1
    assert math.isfinite(share["last-poll-seconds-ago"])
    assert coordinator["heartbeat-total"] >= 1
    assert coordinator["rebalance-total"] >= 1  # the first assignment
    assert coordinator["rebalance-rate-per-hour"] > 0
    assert metrics["consumer-metrics"]["connection-creation-total"] >= 1  # the network's


async def test_failed_acknowledgements_are_counted_once_with_their_outcome(
    cluster: FakeCluster,
) -> None:
    group = fresh("group")
    topic = fake_topic(cluster, b"a", b"b")
    async with fake_member(
        cluster,
        topic,
        group,
        share_acknowledgement_mode="explicit",
        share_acquire_mode="record_limit",
    ) as consumer:
        records = await consume(consumer, 2)
        refuse_acks(cluster, SHARE_ACKNOWLEDGE, 6, times=1)  # NOT_LEADER_OR_FOLLOWER: final
        for record in records:
            consumer.acknowledge(record)
        await consumer.commit()
        fetch = consumer.metrics()[FETCH]
    assert fetch["acknowledgements-send-total"] == 2
    assert fetch["acknowledgements-error-total"] == 2


def decoded(push: TelemetryPush) -> tuple[set[str], dict[str, str]]:
    data = MetricsData.FromString(push.metrics)
    (resource,) = data.resource_metrics
    labels = {kv.key: kv.value.string_value for kv in resource.resource.attributes}
    return {m.name for scope in resource.scope_metrics for m in scope.metrics}, labels


async def test_the_share_consumer_pushes_its_metrics_with_its_group_labels(
    cluster: FakeCluster,
) -> None:
    cluster.telemetry.set_subscription("all", metrics=["org.apache.kafka."], interval_ms=100)
    group = fresh("group")
    topic = fake_topic(cluster, b"a")
    async with fake_member(cluster, topic, group) as consumer:
        await consume(consumer, 1)
        await consumer.commit()
        instance = await consumer.client_instance_id()
        assert instance is not None

        def pushes() -> list[TelemetryPush]:
            return [p for p in cluster.telemetry.pushes if p.client_instance_id == instance]

        async def pushed_twice() -> None:
            while len(pushes()) < 2:
                await consumer.getmany(timeout_ms=20)

        await asyncio.wait_for(pushed_twice(), 20)
        member_id = consumer._membership.member_id
    pushed = pushes()
    assert [p.terminating for p in pushed] == [False] * (len(pushed) - 1) + [True]
    names, labels = decoded(pushed[-1])
    assert names >= SHARE_REQUIRED
    assert labels["group_id"] == group
    assert labels["group_member_id"] == member_id  # the last push goes before it leaves


async def test_no_push_when_it_is_turned_off(cluster: FakeCluster) -> None:
    cluster.telemetry.set_subscription("all", metrics=["org.apache.kafka."], interval_ms=100)
    topic = fake_topic(cluster)
    async with fake_member(cluster, topic, fresh("group"), enable_metrics_push=False) as consumer:
        with pytest.raises(TelemetryDisabledError, match="enable_metrics_push=True"):
            await consumer.client_instance_id()
    assert not any(r.api_key == PUSH for r in cluster.requests)


@pytest.mark.integration  # starts a mock cluster of its own
async def test_the_mock_cluster_decodes_what_the_share_consumer_pushes() -> None:
    """On a mock of its own: its telemetry settings are the whole cluster's."""
    topic, group = fresh("topic"), fresh("group")
    async with MockCluster(
        brokers=1, share_auto_offset_reset="earliest", share_heartbeat_interval_ms=100
    ) as mock:
        await mock.configure_telemetry(["org.apache.kafka."], push_interval_ms=100)
        await mock.track_requests()
        async with ShareConsumer(topic, bootstrap_servers=mock.bootstrap, group_id=group) as c:
            await c.getmany(timeout_ms=100)

            async def pushed() -> None:
                while (await mock.received_api_keys()).count(PUSH) < 2:
                    await c.getmany(timeout_ms=50)

            await asyncio.wait_for(pushed(), 20)
        names = await mock.pushed_metric_names()
    assert names >= SHARE_REQUIRED
