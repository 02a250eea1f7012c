"""A batch the broker refuses as too large (MESSAGE_TOO_LARGE) is split and sent again, as
Java's ``Sender.completeBatch`` does (``RecordAccumulator.splitAndReenqueue``): every record is
delivered once, in order, and its delivery gives its own offset. A record too large alone
still fails, naming itself; the records around it are delivered.

On the fake cluster, whose topics refuse a batch larger than their ``max.message.bytes`` in
bytes, as Kafka's log does."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from kafkawire.errors import MessageTooLargeError
from kafkawire.producer import Delivery, Producer, RecordMetadata, SendBatchError
from kafkawire.records import Header
from kafkawire.testing.fake import FakeCluster
from tests.net.fakebroker import WAIT

LIMIT = 2_000  # the topic's max.message.bytes: a batch of 60 records of 100 bytes is ~6.5 KB
COUNT = 60
# Random bytes: compressed, a batch stays about as large as the records.
VALUES = [random.Random(i).randbytes(100) for i in range(COUNT)]
KEYS = [b"key-%02d" % i for i in range(COUNT)]
# Sent at once, the records fill one batch (linger far away, flush sends it).
QUEUED = {"linger_ms": 60_000, "delivery_timeout_ms": 120_000}


def small_topic(cluster: FakeCluster) -> None:
    cluster.create_topic("t", configs={"max.message.bytes": str(LIMIT)})


async def send_all(producer: Producer, values: list[bytes], **options: Any) -> list[Delivery]:
    deliveries = [
        await producer.send("t", value, key=KEYS[i], partition=0, **options)
        for i, value in enumerate(values)
    ]
    await asyncio.wait_for(producer.flush(), WAIT)
    return deliveries


def refused(cluster: FakeCluster) -> int:
    """How many batches sent to the cluster its topic refused as larger than LIMIT."""
    return sum(
        len(data.records) > LIMIT
        for produce in cluster.requests.of("Produce")
        for topic in produce.request.topic_data
        for data in topic.partition_data
    )


def assert_delivered_in_order(
    cluster: FakeCluster, metadata: list[RecordMetadata], values: list[bytes]
) -> None:
    offsets = [m.offset for m in metadata]
    assert offsets == list(range(len(values)))  # once each, in order, none lost
    written = cluster.records("t", 0)
    assert [r.value for r in written] == values
    assert [r.offset for r in written] == offsets
    assert refused(cluster) >= 2  # split at least twice: ~6.5 KB, 3.3 KB, then 1.6 KB fit


@pytest.mark.parametrize("compression", ["none", "lz4", "zstd", "gzip"])
@pytest.mark.parametrize("idempotence", [True, False], ids=["idempotent", "not idempotent"])
async def test_a_batch_too_large_for_the_topic_is_split_and_each_record_delivered_once(
    idempotence: bool, compression: str
) -> None:
    async with FakeCluster(1) as cluster:
        small_topic(cluster)
        async with Producer(
            cluster.bootstrap,
            enable_idempotence=idempotence,
            compression_type=compression,
            **QUEUED,
        ) as producer:
            deliveries = await send_all(producer, VALUES)
            metadata = [await d for d in deliveries]
            splits = producer.metrics()["producer-metrics"]["batch-split-total"]
        assert_delivered_in_order(cluster, metadata, VALUES)
        assert splits == refused(cluster)  # Java's batch-split-total: one per batch split
        assert [r.key for r in cluster.records("t", 0)] == KEYS
        # A split is no gap: the sequences go on, the epoch is not bumped (Java's split).
        assert len(cluster.requests.of("InitProducerId")) == (1 if idempotence else 0)


async def test_a_transactional_producers_split_batches_commit() -> None:
    async with FakeCluster(1) as cluster:
        small_topic(cluster)
        async with Producer(cluster.bootstrap, transactional_id="tx", **QUEUED) as producer:
            async with asyncio.timeout(WAIT), producer.transaction():
                deliveries = await send_all(producer, VALUES)
            metadata = [await d for d in deliveries]
        assert_delivered_in_order(cluster, metadata, VALUES)
        assert len(cluster.requests.of("InitProducerId")) == 1  # nothing to abort: no bump


async def test_headers_and_timestamps_survive_the_split() -> None:
    headers = [Header("n", b"%d" % i) for i in range(COUNT)]
    async with FakeCluster(1) as cluster:
        small_topic(cluster)
        async with Producer(cluster.bootstrap, **QUEUED) as producer:
            deliveries = [
                await producer.send(
                    "t", VALUES[i], partition=0, timestamp_ms=1_000 + i, headers=[headers[i]]
                )
                for i in range(COUNT)
            ]
            await asyncio.wait_for(producer.flush(), WAIT)
            metadata = [await d for d in deliveries]
        written = cluster.records("t", 0)
    assert [(r.headers, r.timestamp) for r in written] == [
        ((headers[i],), 1_000 + i) for i in range(COUNT)
    ]
    assert [m.timestamp for m in metadata] == [1_000 + i for i in range(COUNT)]


async def test_send_batch_gives_each_record_its_offset_after_a_split() -> None:
    async with FakeCluster(1) as cluster:
        small_topic(cluster)
        async with Producer(cluster.bootstrap, **QUEUED) as producer:
            delivery = await producer.send_batch("t", VALUES, keys=KEYS, partition=0)
            await asyncio.wait_for(producer.flush(), WAIT)
            sent = await delivery
        assert sent.offsets() == list(range(COUNT))
        assert sent.first_offsets == {0: 0}
        assert [r.value for r in cluster.records("t", 0)] == VALUES
        assert refused(cluster) >= 2


async def test_send_batch_names_the_one_record_too_large_alone() -> None:
    values = [*VALUES[:30], b"B" * 3_000, *VALUES[30:]]
    async with FakeCluster(1) as cluster:
        small_topic(cluster)
        async with Producer(cluster.bootstrap, **QUEUED) as producer:
            delivery = await producer.send_batch("t", values, partition=0)
            await asyncio.wait_for(producer.flush(), WAIT)
            with pytest.raises(SendBatchError) as failed:
                await delivery
        assert [r.value for r in cluster.records("t", 0)] == VALUES
    errors = failed.value.errors
    assert [i for i, error in enumerate(errors) if error is not None] == [30]
    assert isinstance(errors[30], MessageTooLargeError)
    offsets = failed.value.sent.offsets()
    assert offsets == [*range(30), -1, *range(30, COUNT)]


@pytest.mark.parametrize("idempotence", [True, False], ids=["idempotent", "not idempotent"])
async def test_a_record_too_large_alone_fails_naming_it_and_the_others_are_delivered(
    idempotence: bool,
) -> None:
    big = b"B" * 3_000  # more than the topic takes, even alone
    values = [*VALUES[:20], big, *VALUES[20:40]]
    async with FakeCluster(1) as cluster:
        small_topic(cluster)
        async with Producer(cluster.bootstrap, enable_idempotence=idempotence, **QUEUED) as p:
            deliveries = [await p.send("t", v, partition=0) for v in values]
            await asyncio.wait_for(p.flush(), WAIT)
            with pytest.raises(MessageTooLargeError) as failed:
                await deliveries[20]
            metadata = [await d for d in deliveries[:20] + deliveries[21:]]
        small = VALUES[:40]
        offsets = [m.offset for m in metadata]
        assert offsets == sorted(offsets)
        assert len(set(offsets)) == len(small)
        written = cluster.records("t", 0)
        assert [r.value for r in written] == small
        assert [r.offset for r in written] == offsets
    message = str(failed.value)
    assert "t/0" in message
    assert "1 record" in message
    assert f"of {LIMIT}" in message  # the broker's words, kept: its limit


async def test_deliveries_of_a_split_batch_are_told_once_each_in_order() -> None:
    told: list[int] = []
    async with FakeCluster(1) as cluster:
        small_topic(cluster)
        async with Producer(cluster.bootstrap, **QUEUED) as producer:
            deliveries = [await producer.send("t", v, partition=0) for v in VALUES]
            for delivery in deliveries:
                delivery.add_done_callback(lambda d: told.append(d.result().offset))
            await asyncio.wait_for(producer.flush(), WAIT)
            await asyncio.sleep(0)
    assert told == list(range(COUNT))


@pytest.mark.parametrize("api", ["send", "send_batch"])
async def test_a_full_default_batch_split_lands_before_the_smaller_batch_behind_it(
    api: str,
) -> None:
    """At the default batch_size (256 KiB), a partition's first batch is refused by a topic
    of a smaller max.message.bytes, while the small batch behind it fits: a broker with no
    state for the producer id would take that one first, and the first batch's parts could
    then never follow it (OUT_OF_ORDER_SEQUENCE_NUMBER until their delivery timeout). Every
    record lands once, in order."""
    values = [b"%05d" % i + b"v" * 95 for i in range(2_300)]  # a full batch and ~100 records
    async with FakeCluster(1) as cluster:
        cluster.create_topic("t", configs={"max.message.bytes": "20000"})
        async with Producer(
            cluster.bootstrap, request_timeout_ms=1_000, delivery_timeout_ms=4_000
        ) as producer:
            if api == "send":
                deliveries = [await producer.send("t", v, partition=0) for v in values]
                offsets = [
                    m.offset for m in await asyncio.wait_for(asyncio.gather(*deliveries), WAIT)
                ]
            else:
                sent = await asyncio.wait_for(
                    await producer.send_batch("t", values, partition=0), WAIT
                )
                offsets = sent.offsets()
            assert producer._accumulator._memory.used == 0  # all given back
        assert [r.value for r in cluster.records("t", 0)] == values
        assert offsets == list(range(len(values)))
