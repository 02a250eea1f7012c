"""The consumer's metrics (Java's names, recorded per Fetch answer, per poll and per
partition handed out) and its health report, on the fake cluster: the values move as records
are read, a rebalance happens and offsets are committed."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.testing.fake import FakeCluster

from .helpers import eventually, until

TP = TopicPartition("t", 0)
FETCH = "consumer-fetch-manager-metrics"
LAG = "consumer-fetch-manager-metrics,topic=t,partition=0"
COORDINATOR = "consumer-coordinator-metrics"
SHORT: dict[str, Any] = {
    "auto_offset_reset": "earliest",
    "fetch_max_wait_ms": 50,
    "max_poll_records": 10,
    "enable_metrics_push": False,
}


async def poll_until(consumer: Consumer, count: int) -> int:
    """Poll until ``count`` records came (each poll hands out at most max_poll_records)."""
    got = 0
    while got < count:
        batch = await asyncio.wait_for(consumer.getmany(timeout_ms=200), 10)
        got += sum(len(records) for records in batch.values())
    return got


async def test_fetch_metrics_and_the_partitions_lag_follow_the_records(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, [b"v%d" % i for i in range(30)])
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap, **SHORT) as consumer:
        before = consumer.metrics()[FETCH]
        assert before["records-consumed-total"] == 0
        assert math.isnan(before["fetch-latency-avg"])
        assert LAG not in consumer.metrics()

        consumer.assign([TP])
        assert await poll_until(consumer, 10) == 10
        metrics = consumer.metrics()
        assert metrics[FETCH]["records-consumed-total"] == 10
        assert metrics[LAG]["records-lag"] == 20  # high watermark 30, position 10
        assert metrics[FETCH]["records-lag-max"] == 20

        await poll_until(consumer, 20)
        fake_cluster.produce("t", 0, [b"more"] * 5)
        await poll_until(consumer, 5)
        metrics = consumer.metrics()
        fetch = metrics[FETCH]
        assert fetch["records-consumed-total"] == 35
        assert fetch["records-consumed-rate"] > 0
        assert fetch["bytes-consumed-total"] > 35 * len(b"v0")  # batches, headers included
        assert fetch["fetch-total"] >= 2  # the 30 records, then the 5
        assert fetch["fetch-latency-max"] >= fetch["fetch-latency-avg"] >= 0
        assert fetch["fetch-size-max"] > 0
        assert metrics[LAG]["records-lag"] == 0
        assert metrics[LAG]["records-lag-max"] == 20
        poll = metrics["consumer-metrics"]
        assert 0 <= poll["poll-idle-ratio-avg"] <= 1
        assert poll["last-poll-seconds-ago"] >= 0
        assert metrics["consumer-metrics"]["connection-creation-total"] >= 2
        assert any(g.startswith("consumer-node-metrics,node-id=node-") for g in metrics)

        consumer.assign([])
        assert LAG not in consumer.metrics()  # a partition no longer assigned takes its own


async def test_coordinator_metrics_count_the_rebalance_commits_and_heartbeats(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t", 3)
    for p in range(3):
        fake_cluster.produce("t", p, [b"v"] * 4)
    async with Consumer(
        "t",
        bootstrap_servers=fake_cluster.bootstrap,
        group_id="g",
        group_protocol="consumer",
        enable_auto_commit=False,
        heartbeat_interval_ms=50,
        **SHORT,
    ) as consumer:
        before = consumer.metrics()[COORDINATOR]
        assert before["rebalance-total"] == before["commit-total"] == 0
        assert before["assigned-partitions"] == 0
        await poll_until(consumer, 12)
        await consumer.commit()
        await consumer.commit()
        await eventually(lambda: consumer.metrics()[COORDINATOR]["heartbeat-total"] >= 2)
        coordinator = consumer.metrics()[COORDINATOR]
    assert coordinator["assigned-partitions"] == 3
    assert coordinator["rebalance-total"] >= 1
    assert coordinator["rebalance-latency-max"] >= coordinator["rebalance-latency-avg"] >= 0
    assert coordinator["rebalance-latency-total"] >= coordinator["rebalance-latency-max"]
    assert coordinator["last-rebalance-seconds-ago"] >= 0
    assert coordinator["commit-total"] == 2
    assert coordinator["commit-latency-max"] >= coordinator["commit-latency-avg"] >= 0
    assert coordinator["last-heartbeat-seconds-ago"] >= 0
    assert coordinator["failed-rebalance-total"] == 0


async def test_a_consumer_without_a_group_has_no_coordinator_metrics() -> None:
    consumer = Consumer(bootstrap_servers="127.0.0.1:1")
    assert COORDINATOR not in consumer.metrics()
    assert consumer.metrics()[FETCH]["records-consumed-total"] == 0
    assert consumer.health().reasons == ("not started: use `async with` or start()",)


async def test_health_is_good_while_fetching_and_names_a_member_that_stopped_polling(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, [b"v"])
    async with Consumer(
        # Long enough that a loaded machine cannot pass it between the poll and the first
        # health check (50 ms did once), short enough to wait out.
        bootstrap_servers=fake_cluster.bootstrap,
        max_poll_interval_ms=500,
        **SHORT,
    ) as consumer:
        consumer.assign([TP])
        await poll_until(consumer, 1)
        health = consumer.health()
        assert health.healthy, health.reasons
        assert health.assigned_partitions == health.fetchable_partitions == 1
        assert health.last_poll_seconds_ago is not None
        await eventually(lambda: not consumer.health().healthy)
        health = consumer.health()
        assert any("has not polled" in r and "max_poll_interval_ms" in r for r in health.reasons)
    assert consumer.health().reasons == ("closed",)


async def test_health_names_the_group_state_while_joining(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    async with Consumer(
        "t",
        bootstrap_servers=fake_cluster.bootstrap,
        group_id="g",
        group_protocol="consumer",
        **SHORT,
    ) as consumer:
        health = consumer.health()  # before the first poll: no heartbeat answered yet
        assert not health.healthy
        assert health.member_state != "STABLE"
        assert any("not stable in group 'g'" in r for r in health.reasons)
        await until(lambda: consumer.health().healthy, consumer)
        assert consumer.health().member_state == "STABLE"
