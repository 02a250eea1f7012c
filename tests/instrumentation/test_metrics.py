"""The messaging client metrics of an instrumented producer and consumer on the fake cluster."""

from __future__ import annotations

import pytest

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.producer import Producer
from kafkawire.testing.fake import FakeCluster

from .conftest import Recorded, getmany_from_start


async def test_sends_count_once_delivered_and_time_the_whole_send(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    fake_cluster.create_topic("orders")
    fake_cluster.create_topic("small", configs={"max.message.bytes": "200"})
    async with Producer(fake_cluster.bootstrap, client_id="shop") as producer:
        await producer.send_and_wait("orders", b"1")
        await producer.send_and_wait("orders", b"2")
        with pytest.raises(Exception, match="MESSAGE_TOO_LARGE"):
            await producer.send_and_wait("small", b"x" * 500)
        with pytest.raises(Exception, match="partition 3 does not exist"):
            await producer.send("orders", b"3", partition=3)  # never sent: not counted
    port = int(fake_cluster.bootstrap.split(",")[0].rpartition(":")[2])
    common = {
        "messaging.system": "kafka",
        "messaging.operation.name": "send",
        "messaging.operation.type": "send",
        "server.address": "127.0.0.1",
        "server.port": port,
        "messaging.destination.partition.id": "0",
    }
    delivered = {**common, "messaging.destination.name": "orders"}
    too_large = {
        **common,
        "messaging.destination.name": "small",
        "error.type": "MessageTooLargeError",
    }
    del too_large["messaging.destination.partition.id"]  # the broker never said which
    sent = {
        tuple(sorted(a.items())): p.value
        for a, p in recorded.points("messaging.client.sent.messages")
    }
    assert sent == {tuple(sorted(delivered.items())): 2, tuple(sorted(too_large.items())): 1}
    durations = {
        a["messaging.destination.name"] + " " + a.get("error.type", "ok"): p.count
        for a, p in recorded.points("messaging.client.operation.duration")
    }
    assert durations == {
        "orders ok": 2,
        "small MessageTooLargeError": 1,
        "orders InvalidPartitionError": 1,
    }


async def test_consumed_records_count_by_how_they_were_handed_out(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    fake_cluster.create_topic("orders", partitions=2)
    fake_cluster.produce("orders", 0, [b"a", b"b"])
    fake_cluster.produce("orders", 1, [b"c"])
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap, group_id="audit") as consumer:
        await getmany_from_start(consumer, TopicPartition("orders", 0), 2)
        consumer.assign([TopicPartition("orders", 1)])
        consumer.seek(TopicPartition("orders", 1), 0)
        async for record in consumer:
            assert record.value == b"c"
            break
    consumed = {
        (a["messaging.operation.name"], a["messaging.destination.partition.id"]): p.value
        for a, p in recorded.points("messaging.client.consumed.messages")
    }
    assert consumed == {("receive", "0"): 2, ("process", "1"): 1}
    for attributes, _ in recorded.points("messaging.client.consumed.messages"):
        assert attributes["messaging.consumer.group.name"] == "audit"
        assert "messaging.client.id" not in attributes
    [(processed, point)] = recorded.points("messaging.process.duration")
    assert (processed["messaging.destination.partition.id"], point.count) == ("1", 1)
    receives = [
        a
        for a, _ in recorded.points("messaging.client.operation.duration")
        if a["messaging.operation.name"] == "receive"
    ]
    assert receives
    assert all(a["messaging.destination.name"] == "orders" for a in receives)
