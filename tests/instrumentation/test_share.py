"""An instrumented share consumer (KIP-932) on the fake cluster: the same receive and process
spans as a consumer's, linked to the records' producers, named by the share group."""

from __future__ import annotations

import asyncio

from opentelemetry.trace import SpanKind

from kafkawire.consumer import ConsumerRecord, ShareConsumer, TopicPartition
from kafkawire.producer import Producer
from kafkawire.testing.fake import FakeCluster

from .conftest import Recorded, ids


async def test_a_share_consumer_s_receive_and_process_spans_link_to_the_producers(
    recorded: Recorded,
) -> None:
    async with FakeCluster(num_brokers=1, share_group_heartbeat_interval_ms=50) as cluster:
        cluster.create_topic("jobs")
        cluster.set_group_config("workers", "share.auto.offset.reset", "earliest")
        async with Producer(cluster.bootstrap) as producer:
            for i in range(3):
                await producer.send_and_wait("jobs", b"job-%d" % i, key=b"k-%d" % i)
        sends = [ids(s.context) for s in recorded.spans("jobs send")]
        processed: list[ConsumerRecord] = []
        async with ShareConsumer(
            "jobs",
            bootstrap_servers=cluster.bootstrap,
            group_id="workers",
            client_id="worker-1",
            fetch_max_wait_ms=50,  # a close waits for the long poll
        ) as consumer:
            received: list[ConsumerRecord] = []
            while not received:
                batches = await asyncio.wait_for(
                    consumer.getmany(timeout_ms=1000, max_records=1), 10
                )
                received += batches.get(TopicPartition("jobs", 0), [])
            async for record in consumer:
                processed.append(record)
                if len(processed) == 2:
                    break
    [receive] = recorded.spans("jobs receive")
    assert receive.kind is SpanKind.CONSUMER
    assert [ids(link.context) for link in receive.links] == sends[:1]
    assert receive.attributes["messaging.batch.message_count"] == 1  # type: ignore[index]
    assert receive.attributes["messaging.consumer.group.name"] == "workers"  # type: ignore[index]
    processes = recorded.spans("jobs process")
    assert [(r.offset, r.key) for r in processed] == [(1, b"k-1"), (2, b"k-2")]
    for process, send, record in zip(processes, sends[1:], processed, strict=True):
        assert ids(process.parent) == send
        assert [ids(link.context) for link in process.links] == [send]
        assert {
            k: process.attributes[k]  # type: ignore[index]
            for k in (
                "messaging.consumer.group.name",
                "messaging.client.id",
                "messaging.kafka.offset",
                "messaging.kafka.message.key",
            )
        } == {
            "messaging.consumer.group.name": "workers",
            "messaging.client.id": "worker-1",
            "messaging.kafka.offset": record.offset,
            "messaging.kafka.message.key": record.key.decode(),
        }
