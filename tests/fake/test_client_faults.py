"""kafkawire's clients through the fake cluster's faults: leaders that move or stop, logs
truncated under a consumer, records deleted before it, topics created on first use."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire.consumer import Consumer, LogTruncationError, TopicPartition
from kafkawire.producer import Producer
from kafkawire.testing.fake import CUT, FakeCluster, HookContext

TP = TopicPartition("t", 0)


async def poll(consumer: Consumer, count: int) -> list[Any]:
    got: list[Any] = []
    while len(got) < count:
        for records in (await asyncio.wait_for(consumer.getmany(timeout_ms=200), 5)).values():
            got.extend(records)
    return got


async def test_the_producer_follows_a_stopped_leader_to_the_next(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, retry_backoff_ms=10) as producer:
        await producer.send_and_wait("t", b"before", partition=0)
        leader, epoch = fake_cluster.leader("t", 0)
        await fake_cluster.stop_broker(leader)
        successor, new_epoch = fake_cluster.leader("t", 0)
        assert (successor != leader, new_epoch) == (True, epoch + 1)
        metadata = await asyncio.wait_for(producer.send_and_wait("t", b"after", partition=0), 10)
    assert metadata.offset == 1
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"before", b"after"]


async def test_the_consumer_follows_a_moved_leader(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, [b"a", b"b"])
    async with Consumer(
        bootstrap_servers=fake_cluster.bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=50
    ) as consumer:
        consumer.assign([TP])
        assert [r.value for r in await poll(consumer, 2)] == [b"a", b"b"]
        leader = fake_cluster.leader("t", 0)[0]
        fake_cluster.move_leader("t", 0, (leader + 1) % 3)
        fake_cluster.produce("t", 0, [b"c"])
        (record,) = await poll(consumer, 1)
    assert (record.value, record.leader_epoch) == (b"c", 1)
    fetches = fake_cluster.requests.of("Fetch")
    assert {f.node_id for f in fetches} == {leader, (leader + 1) % 3}


async def test_a_truncated_log_is_reported_without_a_reset_policy(
    fake_cluster: FakeCluster,
) -> None:
    """KIP-320: the consumer read offsets 0-3 in epoch 0; an unclean election keeps 0-1 only.
    With auto_offset_reset="none" it must say so instead of reading on from 4."""
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, [b"a", b"b"])
    fake_cluster.produce("t", 0, [b"c", b"d"])
    async with Consumer(
        bootstrap_servers=fake_cluster.bootstrap, auto_offset_reset="none", fetch_max_wait_ms=50
    ) as consumer:
        consumer.assign([TP])
        consumer.seek(TP, 0)
        assert len(await poll(consumer, 4)) == 4
        fake_cluster.truncate("t", 0, 2)
        fake_cluster.produce("t", 0, [b"x", b"y", b"z"])  # offsets 2-4, epoch 1
        with pytest.raises(LogTruncationError) as caught:
            await poll(consumer, 1)
    assert caught.value.divergent_offset == 2


async def test_deleted_records_reset_the_consumer(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, [b"a", b"b", b"c"])
    async with Consumer(
        bootstrap_servers=fake_cluster.bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=50
    ) as consumer:
        consumer.assign([TP])
        consumer.seek(TP, 0)
        fake_cluster.delete_records("t", 0, 2)
        (record,) = await poll(consumer, 1)
    assert (record.offset, record.value) == (2, b"c")


async def test_the_producer_waits_for_a_topic_created_on_first_use(
    fake_cluster: FakeCluster,
) -> None:
    """Kafka answers the first Metadata for an auto-created topic LEADER_NOT_AVAILABLE."""
    async with Producer(fake_cluster.bootstrap, retry_backoff_ms=10) as producer:
        metadata = await asyncio.wait_for(producer.send_and_wait("new", b"first"), 10)
    assert metadata.offset == 0
    assert fake_cluster.records("new", 0)[0].value == b"first"


async def test_answers_lost_after_writing_leave_no_duplicates(fake_cluster: FakeCluster) -> None:
    """Every third Produce is written and then its connection cut before the answer: the
    idempotent producer sends again, the log answers the duplicates, and each record is in
    the log once, in order."""
    fake_cluster.create_topic("t")
    produced = 0

    async def lose_every_third(request: Any, ctx: HookContext) -> Any:
        nonlocal produced
        produced += 1
        if produced % 3:
            return None
        await ctx.handle()
        return CUT

    fake_cluster.control(lose_every_third, api_key="Produce", keep=True)
    values = [b"%d" % i for i in range(200)]
    async with Producer(
        fake_cluster.bootstrap,
        linger_ms=1,
        batch_size=200,
        retry_backoff_ms=1,
        reconnect_backoff_ms=1,
        reconnect_backoff_max_ms=1,
    ) as producer:
        deliveries = [await producer.send("t", value, partition=0) for value in values]
        offsets = [(await delivery).offset for delivery in deliveries]
    assert offsets == list(range(200))
    assert [r.value for r in fake_cluster.records("t", 0)] == values
    assert produced > 6


async def test_a_small_fetch_size_still_reads_every_partition(fake_cluster: FakeCluster) -> None:
    """With room for about one batch per fetch, later partitions get cut batches (or none);
    the session's rotation lets each partition come first in turn."""
    fake_cluster.create_topic("t", partitions=3, replication_factor=1)
    for p in range(3):
        fake_cluster.move_leader("t", p, 0)
        for i in range(5):
            fake_cluster.produce("t", p, [b"%d-%d-" % (p, i) + b"x" * 200])
    async with Consumer(
        "t",
        bootstrap_servers=fake_cluster.bootstrap,
        auto_offset_reset="earliest",
        fetch_max_bytes=400,
        max_partition_fetch_bytes=400,
        fetch_max_wait_ms=10,
    ) as consumer:
        got = await poll(consumer, 15)
    assert sorted((r.partition, r.offset) for r in got) == [
        (p, o) for p in range(3) for o in range(5)
    ]
