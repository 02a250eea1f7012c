"""The producer's metrics (Java's names, recorded per batch and request) and its health
report, on the fake cluster."""

from __future__ import annotations

import asyncio
import math

from kafkawire.errors import MessageTooLargeError
from kafkawire.producer import Producer
from kafkawire.testing.fake import DROP, FakeCluster
from kafkawire.testing.fake.faults import answer_partitions


async def test_metrics_count_what_was_sent_with_javas_names(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("orders", partitions=2)
    async with Producer(fake_cluster.bootstrap, linger_ms=0, compression_type="gzip") as producer:
        deliveries = [await producer.send("orders", b"x" * 100, partition=i % 2) for i in range(50)]
        await producer.flush()
        for delivery in deliveries:
            await delivery
        metrics = producer.metrics()
    sent = metrics["producer-metrics"]
    assert sent["record-send-total"] == 50
    assert sent["record-send-rate"] > 0
    assert sent["record-error-total"] == 0
    assert sent["batch-size-avg"] > 0
    assert 0 < sent["compression-rate-avg"] < 1  # gzip of repeated bytes
    assert sent["request-latency-max"] >= sent["request-latency-avg"] >= 0
    assert sent["record-queue-time-max"] >= sent["record-queue-time-avg"] >= 0
    assert sent["produce-throttle-time-max"] == 0
    assert sent["buffer-available-bytes"] == sent["buffer-total-bytes"] == 33554432
    assert sent["connection-creation-total"] >= 2  # bootstrap, then the leader's connections
    nodes = [group for group in metrics if group.startswith("producer-node-metrics,node-id=")]
    assert nodes
    for node in nodes:
        assert set(metrics[node]) == {"request-latency-avg", "request-latency-max"}


async def test_before_start_the_metrics_exist_and_are_empty() -> None:
    producer = Producer("127.0.0.1:1")
    sent = producer.metrics()["producer-metrics"]
    assert sent["record-send-total"] == 0
    assert math.isnan(sent["request-latency-avg"])
    assert producer.health().reasons == ("not started: use `async with` or start()",)


async def test_records_that_fail_for_good_are_counted(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(answer_partitions(MessageTooLargeError.code), api_key="Produce", keep=True)
    async with Producer(fake_cluster.bootstrap, linger_ms=0) as producer:
        delivery = await producer.send("t", b"v", partition=0)
        await producer.flush()
        assert delivery.done()
        assert producer.metrics()["producer-metrics"]["record-error-total"] == 1


async def test_health_is_good_while_records_flow(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap) as producer:
        await producer.send_and_wait("t", b"v")
        health = producer.health()
    assert health.healthy
    assert health.reasons == ()
    assert health.sender_running
    assert health.batches_waiting == 0
    assert health.oldest_batch_age_s is None
    assert producer.health().reasons == ("closed",)


async def test_health_names_a_batch_stuck_past_linger_and_request_timeout(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(lambda request, ctx: DROP, api_key="Produce", keep=True)
    async with Producer(
        fake_cluster.bootstrap,
        linger_ms=0,
        request_timeout_ms=50,
        delivery_timeout_ms=60_000,
        enable_idempotence=False,
    ) as producer:
        await producer.send("t", b"v", partition=0)
        while (health := producer.health()).healthy:
            await asyncio.sleep(0.01)
        assert health.batches_waiting == 1
        assert health.oldest_batch_age_s is not None
        assert any("linger_ms + request_timeout_ms (50 ms)" in r for r in health.reasons)
        await producer.close(timeout=0)
