"""The consumer without a group against the embedded brokers: fetching, positions, seeks."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import pytest

from kafkawire.consumer import (
    Consumer,
    ConsumerRecord,
    NoOffsetForPartitionError,
    OffsetOutOfRangeError,
    TopicPartition,
)
from kafkawire.producer import Producer
from kafkawire.testing.pytest_plugin import Broker, kafka_brokers, mock_cluster_bug, tansu_bug

from .helpers import fresh_topic, produce, read

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def filled(broker: Broker, written: list[bytes]) -> TopicPartition:
    """Partition 0 of a new topic, holding ``written``."""
    topic = await fresh_topic(broker)
    await produce(broker, topic, written)
    return TopicPartition(topic, 0)


def values(records: Iterable[ConsumerRecord]) -> list[Any]:
    return [r.value for r in records]


async def test_topics_without_a_group_read_every_partition(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker, partitions=4)
    for p in range(4):
        await produce(kafka_broker, topic, [b"%d-%d" % (p, i) for i in range(25)], p)
    async with Consumer(
        topic, bootstrap_servers=kafka_broker.bootstrap, auto_offset_reset="earliest"
    ) as consumer:
        got = await read(consumer, 100)
        assert consumer.assignment() == {TopicPartition(topic, p) for p in range(4)}
    for p in range(4):
        mine = [r for r in got if r.partition == p]
        assert [r.offset for r in mine] == list(range(25))
        assert values(mine) == [b"%d-%d" % (p, i) for i in range(25)]


async def test_assign_iterate_and_positions(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker)
    tp = TopicPartition(topic, 0)
    await produce(kafka_broker, topic, [b"%d" % i for i in range(30)])
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap,
        auto_offset_reset="earliest",
        value_deserializer=lambda v: int(v or b"-1"),
        max_poll_records=7,
    ) as consumer:
        consumer.assign([tp])
        seen = []
        async for record in consumer:
            seen.append(record.value)
            if len(seen) == 12:
                break
        assert seen == list(range(12))
        assert await consumer.position(tp) == 12  # what was yielded, not what was fetched
        assert consumer.highwater(tp) == 30
        consumer.seek(tp, 25)
        assert values(await read(consumer, 5)) == list(range(25, 30))
        consumer.seek_to_beginning()
        assert values(await read(consumer, 3))[:3] == [0, 1, 2]
        consumer.seek_to_end(tp)
        assert await consumer.position(tp) == 30
        assert await consumer.getmany(timeout_ms=100) == {}
        await produce(kafka_broker, topic, [b"30", b"31"])
        assert values(await read(consumer, 2)) == [30, 31]


async def test_end_and_beginning_offsets(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker)
    tp = TopicPartition(topic, 0)
    await produce(kafka_broker, topic, [b"x"] * 23)  # batches of 10: 0-9, 10-19, 20-22
    async with Consumer(bootstrap_servers=kafka_broker.bootstrap) as consumer:
        assert await consumer.end_offsets([tp]) == {tp: 23}
        assert await consumer.beginning_offsets([tp]) == {tp: 0}
        consumer.assign([tp])  # from "latest": nothing old comes back
        assert await consumer.position(tp) == 23
        assert await consumer.getmany(timeout_ms=100) == {}


@kafka_brokers(
    tansu=tansu_bug("ListOffsets by timestamp returns offset 0"),
    mock_cluster=mock_cluster_bug("ListOffsets by timestamp answers -1 (not implemented)"),
)
async def test_offsets_for_times(kafka_broker: Broker) -> None:
    """Neither embedded broker finds offsets by time (test_fetcher_faults shows the
    consumer's side on a fake broker); a Kafka broker passes this."""
    topic = await fresh_topic(kafka_broker)
    tp = TopicPartition(topic, 0)
    await produce(kafka_broker, topic, [b"old"] * 5)
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        old = await read(consumer, 5)
        await asyncio.sleep(0.05)  # so that the next records are stamped later
        await produce(kafka_broker, topic, [b"new"] * 5)
        new = await read(consumer, 5)
        found = await consumer.offsets_for_times({tp: new[0].timestamp})
        assert found[tp] is not None
        assert found[tp].offset == 5
        assert old[-1].timestamp < new[0].timestamp
        assert (await consumer.offsets_for_times({tp: new[-1].timestamp + 60_000}))[tp] is None


async def test_pause_and_resume(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker, partitions=4)
    for p in (0, 1):
        await produce(kafka_broker, topic, [b"p%d" % p] * 5, p)
    a, b = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([a, b])
        consumer.pause(a)
        got = await read(consumer, 5)
        assert {r.partition for r in got} == {1}
        assert await consumer.getmany(timeout_ms=200) == {}
        assert consumer.paused() == {a}
        consumer.resume(a)
        assert {r.partition for r in await read(consumer, 5)} == {0}


async def test_no_position_and_no_reset_policy_names_the_partition(kafka_broker: Broker) -> None:
    tp = await filled(kafka_broker, [b"x"] * 3)
    topic = tp.topic
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap, auto_offset_reset="none"
    ) as consumer:
        consumer.assign([tp])
        with pytest.raises(NoOffsetForPartitionError, match=f"{topic}/0"):
            await consumer.getmany(timeout_ms=5000)
        consumer.seek(tp, 2)
        assert values(await read(consumer, 1)) == [b"x"]


_PAST_THE_END = "a Fetch past the end of the log answers no records and no error"


@kafka_brokers(tansu=tansu_bug(_PAST_THE_END, raises=TimeoutError))
async def test_out_of_range_resets_or_names_the_partition(kafka_broker: Broker) -> None:
    tp = await filled(kafka_broker, [b"x"] * 3)
    topic = tp.topic
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 1000)
        assert len(await read(consumer, 3, timeout=3)) == 3  # reset to the beginning
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap, auto_offset_reset="none"
    ) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 1000)
        with pytest.raises(OffsetOutOfRangeError, match=f"offset 1000 .* {topic}/0"):
            await consumer.getmany(timeout_ms=5000)


async def test_a_cancelled_getmany_leaves_the_consumer_usable(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker)
    tp = TopicPartition(topic, 0)
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap, fetch_max_wait_ms=1000
    ) as consumer:
        consumer.assign([tp])
        pending = asyncio.ensure_future(consumer.getmany(timeout_ms=60_000))
        await asyncio.sleep(0.2)
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        await produce(kafka_broker, topic, [b"after"])
        assert values(await read(consumer, 1)) == [b"after"]


async def _transactions(broker: Broker) -> str:
    """A topic holding a committed, an aborted and another committed transaction."""
    topic = await fresh_topic(broker, partitions=4)
    async with Producer(broker.bootstrap, transactional_id=f"tx-{topic}") as producer:
        for value in (b"committed", b"aborted", b"committed too"):
            producer.begin_transaction()
            await producer.send(topic, value, partition=0)
            await producer.flush()
            if value == b"aborted":
                await producer.abort_transaction()
            else:
                await producer.commit_transaction()
    return topic


async def _read_transactions(broker: Broker, isolation_level: Any) -> list[Any]:
    topic = await _transactions(broker)
    async with Consumer(
        bootstrap_servers=broker.bootstrap,
        auto_offset_reset="earliest",
        isolation_level=isolation_level,
        check_crcs=False,  # the mock cluster writes control batches with crc 0
    ) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        got = values(await read(consumer, 2, timeout=10))
        got += values((await consumer.getmany(timeout_ms=500)).get(TopicPartition(topic, 0), []))
        return got


async def test_read_uncommitted_hides_transaction_markers(mock_cluster: Broker) -> None:
    got = await _read_transactions(mock_cluster, "read_uncommitted")
    assert got == [b"committed", b"aborted", b"committed too"]


@kafka_brokers(
    tansu=False,
    mock_cluster=mock_cluster_bug(
        "Fetch lists no aborted transactions (test_fetcher_faults shows the filter)"
    ),
)
async def test_read_committed_drops_the_aborted_transaction(kafka_broker: Broker) -> None:
    got = await _read_transactions(kafka_broker, "read_committed")
    assert got == [b"committed", b"committed too"]


@kafka_brokers(tansu=tansu_bug("OffsetFetch returns no commit metadata"))
async def test_manual_assignment_commits_with_metadata_and_resumes(kafka_broker: Broker) -> None:
    tp = await filled(kafka_broker, [b"%d" % i for i in range(5)])
    group = f"manual-{tp.topic}"
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap, group_id=group, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        assert await consumer.committed(tp) is None
        await read(consumer, 2)
        await consumer.commit({tp: (3, "note")})
    async with Consumer(bootstrap_servers=kafka_broker.bootstrap, group_id=group) as consumer:
        consumer.assign([tp])
        assert (await read(consumer, 1))[0].offset == 3
        committed = await consumer.committed(tp)
        assert committed is not None
        assert (committed.offset, committed.metadata) == (3, "note")
