"""The share consumer against the fake cluster, which keeps Kafka's rules where librdkafka's
mock cannot show them: ShareFetch and ShareAcknowledge v2 (acquire modes, RENEW), session
errors and recovery, leader changes, GAPs, delivery counts after a lock expires (on a hand-moved
clock), and members sharing a partition."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kafkawire.consumer import (
    AcknowledgeType,
    ConsumerRecord,
    ConsumerStateError,
    ShareConsumer,
    ShareSessionEndedError,
    TopicPartition,
)
from kafkawire.errors import InvalidRecordStateError, KafkawireError, ShareSessionNotFoundError
from kafkawire.producer import Producer
from kafkawire.testing.fake import FakeCluster, ManualClock

from .helpers import Requests, consume, fresh

SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def cluster(clock: ManualClock) -> AsyncIterator[FakeCluster]:
    async with FakeCluster(clock=clock, share_group_heartbeat_interval_ms=50) as cluster:
        yield cluster


def member(cluster: FakeCluster, topic: str, group: str, **options: Any) -> ShareConsumer:
    cluster.set_group_config(group, "share.auto.offset.reset", "earliest")
    options = {"fetch_max_wait_ms": 50, **options}  # a close waits for the long poll
    return ShareConsumer(topic, bootstrap_servers=cluster.bootstrap, group_id=group, **options)


def states(cluster: FakeCluster, group: str, topic: str, partition: int = 0) -> dict[int, str]:
    share = cluster.share_partition(group, topic, partition)
    assert share is not None
    return {o: r.state.name for o, r in share.records.items()}


def done(cluster: FakeCluster, group: str, topic: str, partition: int, end: int) -> bool:
    """Whether every record below ``end`` is finished for the group (acknowledged or
    archived: the start offset moved past it)."""
    share = cluster.share_partition(group, topic, partition)
    return share is not None and share.start_offset >= end


async def until(condition: Any, *consumers: ShareConsumer, timeout: float = 20) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.gather(*(c.getmany(timeout_ms=20) for c in consumers))

    await asyncio.wait_for(poll(), timeout)


async def test_renew_extends_the_lock_and_delivers_the_record_again(
    cluster: FakeCluster, clock: ManualClock
) -> None:
    topic, group = fresh("topic"), fresh("group")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"slow"])
    outcomes: list[KafkawireError | None] = []
    async with member(cluster, topic, group, share_acknowledgement_mode="explicit") as consumer:
        consumer.set_acknowledgement_commit_callback(lambda _, e: outcomes.append(e))
        (record,) = await consume(consumer, 1)
        assert consumer.acquisition_lock_timeout_ms == 30_000
        clock.advance(20)
        consumer.acknowledge(record, AcknowledgeType.RENEW)
        assert await consumer.commit() == {TopicPartition(topic, 0): None}
        clock.advance(20)  # 40 s after it was acquired: the renewed lock still holds it
        (again,) = await consume(consumer, 1)
        assert (again.offset, again.delivery_count) == (0, 1)
        consumer.acknowledge(again, AcknowledgeType.ACCEPT)
        await consumer.commit()
    assert outcomes == [None, None]
    assert done(cluster, group, topic, 0, 1)


async def test_record_limit_acquires_no_more_than_max_poll_records(
    cluster: FakeCluster,
) -> None:
    topic, group = fresh("topic"), fresh("group")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"%d" % i for i in range(6)])  # one batch
    async with member(
        cluster, topic, group, share_acquire_mode="record_limit", max_poll_records=2
    ) as consumer:
        first = await consume(consumer, 2)
        held = states(cluster, group, topic)
        rest = await consume(consumer, 4)
        await consumer.commit()
    assert [r.offset for r in first] == [0, 1]
    assert [held.get(o) for o in range(2)] == ["ACQUIRED", "ACQUIRED"]
    assert "ACQUIRED" not in {held.get(o) for o in range(2, 6)}
    assert [r.offset for r in rest] == [2, 3, 4, 5]
    assert done(cluster, group, topic, 0, 6)


async def test_a_lost_share_session_fails_its_acknowledgements_at_once_and_recovers(
    cluster: FakeCluster,
) -> None:
    """Kafka drops a session when the connection that opened it closes, and releases its
    records: the acknowledgements of those records fail at once (KAFKA-18164: Java waited for
    them for ever), and the records come again in a new session."""
    topic, group = fresh("topic"), fresh("group")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"a", b"b"])
    leader, _ = cluster.leader(topic, 0)
    async with member(cluster, topic, group, share_acknowledgement_mode="explicit") as consumer:
        first = await consume(consumer, 2)
        await cluster.cut_connections(leader)
        for record in first:
            consumer.acknowledge(record)
        results = await consumer.commit()
        again = await consume(consumer, 2, answer=consumer.acknowledge)
        assert await consumer.commit() == {TopicPartition(topic, 0): None}
    # the session's own error, at once: not a commit that waited out its time
    assert isinstance(
        results[TopicPartition(topic, 0)], ShareSessionNotFoundError | ShareSessionEndedError
    )
    assert [(r.offset, r.delivery_count) for r in again] == [(0, 2), (1, 2)]
    assert done(cluster, group, topic, 0, 2)


@pytest.mark.parametrize("code", [122, 123, 133])  # NOT_FOUND, INVALID_EPOCH, LIMIT_REACHED
async def test_a_session_error_opens_a_new_session_at_once(cluster: FakeCluster, code: int) -> None:
    topic, group = fresh("topic"), fresh("group")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"a"])
    requests = Requests()
    answered: list[int] = []

    def refuse(request: Any, ctx: Any) -> Any:
        if request.share_session_epoch > 0 and not answered:
            answered.append(code)
            return type(request).__response__(error_code=code)
        return None

    cluster.control(refuse, api_key="ShareFetch", keep=True)
    async with ShareConsumer(
        topic,
        bootstrap_servers=cluster.bootstrap,
        group_id=group,
        fetch_max_wait_ms=50,
        connect=requests.connect(),
    ) as consumer:
        cluster.set_group_config(group, "share.auto.offset.reset", "earliest")
        got = await consume(consumer, 1)
        await until(lambda: bool(answered), consumer)
        cluster.produce(topic, 0, [b"b"])
        got += await consume(consumer, 1)
        await consumer.commit()
    assert [r.value for r in got] == [b"a", b"b"]
    epochs = [f.share_session_epoch for f in requests.of(SHARE_FETCH)]
    refused = epochs.index(next(e for e in epochs if e > 0))
    assert 0 in epochs[refused + 1 :]  # opened again
    assert not any(  # and no acknowledgement rode the epoch-0 fetch
        p.acknowledgement_batches
        for f in requests.of(SHARE_FETCH)
        if f.share_session_epoch == 0
        for t in f.topics
        for p in t.partitions
    )


async def test_a_leader_change_strands_nothing(cluster: FakeCluster) -> None:
    """A partition that moves is fetched from its new leader at once: what was fetched ahead
    from the old one is dropped (the new leader delivers it again), what was delivered from the
    old one and acknowledged there fails, and every record ends acknowledged, each delivered
    once after the move (franz-go 1.21.4 stranded such records)."""
    topic, group = fresh("topic"), fresh("group")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"a", b"b"])
    old, _ = cluster.leader(topic, 0)
    outcomes: list[KafkawireError | None] = []
    async with member(cluster, topic, group, share_acknowledgement_mode="explicit") as consumer:
        consumer.set_acknowledgement_commit_callback(lambda _, e: outcomes.append(e))
        first = await consume(consumer, 2)
        cluster.produce(topic, 0, [b"c"])

        async def fetched_ahead() -> None:
            while states(cluster, group, topic).get(2) != "ACQUIRED":
                await asyncio.sleep(0.01)

        await asyncio.wait_for(fetched_ahead(), 20)  # c sits in the consumer's buffer
        cluster.move_leader(topic, 0, (old + 1) % 3)
        for record in first:
            consumer.acknowledge(record)
        await consumer.commit()
        rest = await consume(consumer, 3, answer=consumer.acknowledge)
        await consumer.commit()
    assert [r.value for r in rest] == [b"a", b"b", b"c"]
    assert isinstance(outcomes[0], KafkawireError)
    assert outcomes[-1] is None
    assert done(cluster, group, topic, 0, 3)


async def test_offsets_without_records_are_answered_as_gaps(cluster: FakeCluster) -> None:
    """A transaction's marker takes an offset but is no record: it is acquired, and the
    consumer answers it GAP, so the group moves past it."""
    topic, group = fresh("topic"), fresh("group")
    cluster.create_topic(topic, partitions=1)
    producer = Producer(cluster.bootstrap, transactional_id=fresh("txn"))
    async with producer, producer.transaction():
        await producer.send(topic, b"a", partition=0)
    cluster.produce(topic, 0, [b"b"])  # after the marker at offset 1
    async with member(cluster, topic, group) as consumer:
        got = await consume(consumer, 2)
        await consumer.commit()
    assert [(r.offset, r.value) for r in got] == [(0, b"a"), (2, b"b")]
    assert done(cluster, group, topic, 0, 3)  # the marker's offset was answered too


async def test_a_record_whose_lock_expired_comes_again_counted_and_late_acks_fail(
    cluster: FakeCluster, clock: ManualClock
) -> None:
    topic, group = fresh("topic"), fresh("group")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"a"])
    # record_limit: it fetches only while the application polls, so it takes nothing more
    async with member(
        cluster,
        topic,
        group,
        share_acknowledgement_mode="explicit",
        share_acquire_mode="record_limit",
    ) as slow:
        (record,) = await consume(slow, 1)
        clock.advance(31)  # past the 30 s lock
        async with member(cluster, topic, group) as other:
            (again,) = await consume(other, 1)
            slow.acknowledge(record)  # too late: another member holds it now
            results = await slow.commit()
            await other.commit()
    assert (record.delivery_count, again.offset, again.delivery_count) == (1, 0, 2)
    assert isinstance(results[TopicPartition(topic, 0)], InvalidRecordStateError)
    assert done(cluster, group, topic, 0, 1)


async def test_two_members_share_one_partition_and_read_each_record_once(
    cluster: FakeCluster,
) -> None:
    topic, group = fresh("topic"), fresh("group")
    cluster.create_topic(topic, partitions=1)
    members = [member(cluster, topic, group, max_poll_records=5) for _ in range(2)]
    got: dict[int, list[ConsumerRecord]] = {0: [], 1: []}
    for consumer in members:
        await consumer.start()
    try:
        await until(lambda: all(c.assignment() for c in members), *members)
        assert [c.assignment() for c in members] == [{TopicPartition(topic, 0)}] * 2
        for start in range(0, 100, 10):
            cluster.produce(topic, 0, [b"%d" % i for i in range(start, start + 10)])

        async def take(index: int) -> None:
            for records in (await members[index].getmany(timeout_ms=20)).values():
                got[index].extend(records)

        async def both() -> None:
            while len(got[0]) + len(got[1]) < 100:
                await asyncio.gather(take(0), take(1))

        await asyncio.wait_for(both(), 20)
        await asyncio.gather(*(c.commit() for c in members))
    finally:
        await asyncio.gather(*(c.close() for c in members))
    counts = Counter(r.offset for r in got[0] + got[1])
    assert counts == Counter(range(100))
    assert got[0]  # both read from it
    assert got[1]
    assert done(cluster, group, topic, 0, 100)


async def test_unsubscribing_leaves_the_group_and_subscribing_joins_again(
    cluster: FakeCluster,
) -> None:
    topic, group = fresh("topic"), fresh("group")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"a"])
    async with member(cluster, topic, group) as consumer:
        await consume(consumer, 1)
        await consumer.commit()
        consumer.unsubscribe()
        assert consumer.subscription() == set()
        with pytest.raises(ConsumerStateError, match="not subscribed"):
            await consumer.getmany()

        async def left() -> None:
            while consumer.assignment():
                await asyncio.sleep(0.01)

        await asyncio.wait_for(left(), 20)
        cluster.produce(topic, 0, [b"b"])
        consumer.subscribe([topic])
        (record,) = await consume(consumer, 1)
        await consumer.commit()
    assert record.value == b"b"
    assert done(cluster, group, topic, 0, 2)
