"""Produce against the fake: kafkawire's producer, then the broker's rules on the wire
(batch checks, idempotence, acks, leaders)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.messages.init_producer_id import v4 as init_producer_id
from kafkawire.messages.produce import v9 as produce_v9
from kafkawire.messages.produce import v10 as produce_v10
from kafkawire.messages.produce import v13 as produce_v13
from kafkawire.producer import Producer
from kafkawire.protocol import convert
from kafkawire.records import Compression, RecordBatchBuilder
from kafkawire.testing.fake import Error, FakeCluster

from .wire import Wire, batch


def produce(records: bytes | None, *, topic: str = "t", acks: int = -1) -> Any:
    return produce_v9.ProduceRequest(
        acks=acks,
        timeout_ms=1000,
        topic_data=(
            produce_v9.TopicProduceData(
                name=topic,
                partition_data=(produce_v9.PartitionProduceData(index=0, records=records),),
            ),
        ),
    )


async def answer(wire: Wire, records: bytes | None, **options: Any) -> tuple[int, int]:
    response = await wire.send(produce(records, **options))
    result = response.responses[0].partition_responses[0]
    return result.error_code, result.base_offset


@pytest.fixture
def leader(fake_cluster: FakeCluster) -> int:
    fake_cluster.create_topic("t")
    return fake_cluster.leader("t", 0)[0]


async def test_the_producer_writes_every_partition_in_order(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("orders", partitions=3)
    async with Producer(fake_cluster.bootstrap, compression_type="zstd", linger_ms=1) as producer:
        deliveries = [
            await producer.send("orders", b"v%d" % i, key=b"k%d" % (i % 5)) for i in range(60)
        ]
        offsets = [await d for d in deliveries]
    by_partition: dict[int, list[int]] = {}
    for metadata in offsets:
        by_partition.setdefault(metadata.partition, []).append(metadata.offset)
    for partition, written in by_partition.items():
        assert written == list(range(len(written)))
        assert len(fake_cluster.records("orders", partition)) == len(written)
    assert sum(map(len, by_partition.values())) == 60


async def test_duplicates_are_answered_with_the_first_offset(
    fake_cluster: FakeCluster, leader: int
) -> None:
    async with Wire(fake_cluster, leader) as wire:
        ids = await wire.send(
            init_producer_id.InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=-1)
        )
        pid, epoch = ids.producer_id, ids.producer_epoch
        first = batch(b"a", b"b", producer_id=pid, epoch=epoch, sequence=0)
        assert await answer(wire, first) == (Error.NONE, 0)
        assert await answer(wire, batch(b"c", producer_id=pid, epoch=epoch, sequence=2)) == (0, 2)
        assert await answer(wire, first) == (Error.NONE, 0)  # a retry of the first
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"a", b"b", b"c"]


async def test_only_the_last_five_batches_are_remembered(
    fake_cluster: FakeCluster, leader: int
) -> None:
    async with Wire(fake_cluster, leader) as wire:
        for sequence in range(6):
            assert await answer(wire, batch(b"x", producer_id=7, epoch=0, sequence=sequence)) == (
                0,
                sequence,
            )
        # Sequence 0 has left the cache of five: no longer a duplicate, out of order.
        assert await answer(wire, batch(b"x", producer_id=7, epoch=0, sequence=0)) == (
            Error.OUT_OF_ORDER_SEQUENCE_NUMBER,
            -1,
        )
        assert (await answer(wire, batch(b"x", producer_id=7, epoch=0, sequence=1)))[0] == 0


async def test_a_gap_is_out_of_order_and_a_new_epoch_starts_at_zero(
    fake_cluster: FakeCluster, leader: int
) -> None:
    async with Wire(fake_cluster, leader) as wire:
        assert (await answer(wire, batch(b"a", producer_id=9, epoch=0, sequence=0)))[0] == 0
        assert await answer(wire, batch(b"c", producer_id=9, epoch=0, sequence=2)) == (
            Error.OUT_OF_ORDER_SEQUENCE_NUMBER,
            -1,
        )
        assert (await answer(wire, batch(b"b", producer_id=9, epoch=0, sequence=1)))[0] == 0
        assert (await answer(wire, batch(b"x", producer_id=9, epoch=1, sequence=5)))[0] == (
            Error.OUT_OF_ORDER_SEQUENCE_NUMBER
        )
        assert (await answer(wire, batch(b"d", producer_id=9, epoch=1, sequence=0)))[0] == 0
        assert await answer(wire, batch(b"e", producer_id=9, epoch=0, sequence=2)) == (
            Error.INVALID_PRODUCER_EPOCH,
            -1,
        )
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"a", b"b", b"d"]


async def test_a_producer_the_partition_does_not_know_may_start_anywhere(
    fake_cluster: FakeCluster, leader: int
) -> None:
    """Kafka stopped answering UNKNOWN_PRODUCER_ID to Produce with KIP-360 (2.5): a producer
    with no state on the partition (new, or its batches deleted) is taken at any sequence."""
    async with Wire(fake_cluster, leader) as wire:
        assert await answer(wire, batch(b"a", producer_id=12345, epoch=3, sequence=17)) == (0, 0)
        assert (await answer(wire, batch(b"b", producer_id=12345, epoch=3, sequence=18)))[0] == 0
    fake_cluster.delete_records("t", 0, 2)
    async with Wire(fake_cluster, leader) as wire:
        assert await answer(wire, batch(b"c", producer_id=12345, epoch=3, sequence=40)) == (0, 2)


@pytest.mark.parametrize(
    ("records", "error"),
    [
        (None, Error.INVALID_RECORD),
        (batch(b"a") + batch(b"b"), Error.INVALID_RECORD),  # two batches
        (batch(b"a")[:-3], Error.INVALID_RECORD),  # cut short
        (batch(b"a")[:16] + b"\x01" + batch(b"a")[17:], Error.INVALID_RECORD),  # magic 1
        (batch(b"a")[:-1] + b"\xff", Error.CORRUPT_MESSAGE),  # crc no longer matches
        (batch(b"a", producer_id=3, epoch=0, sequence=-1), Error.INVALID_RECORD),
    ],
    ids=["null", "two-batches", "short", "magic-1", "crc", "no-sequence"],
)
async def test_batches_kafka_refuses(
    fake_cluster: FakeCluster, leader: int, records: bytes | None, error: Error
) -> None:
    async with Wire(fake_cluster, leader) as wire:
        assert await answer(wire, records) == (error, -1)
    assert fake_cluster.records("t", 0) == []


async def test_control_batches_and_zstd_before_v7_are_refused(
    fake_cluster: FakeCluster, leader: int
) -> None:
    control = RecordBatchBuilder(producer_id=1, producer_epoch=0, transactional=True, control=True)
    control.append(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00", timestamp=0)
    zstd = RecordBatchBuilder(compression=Compression.ZSTD)
    zstd.append(None, b"z", timestamp=0)
    async with Wire(fake_cluster, leader) as wire:
        assert await answer(wire, control.build()) == (Error.INVALID_RECORD, -1)
        old = produce(zstd.build())
        response = await wire.send(convert(old, 6))
        assert response.responses[0].partition_responses[0].error_code == (
            Error.UNSUPPORTED_COMPRESSION_TYPE
        )
        assert await answer(wire, zstd.build()) == (0, 0)  # v9 takes it


async def test_a_batch_larger_than_max_message_bytes_is_refused() -> None:
    async with FakeCluster(1, max_message_bytes=200) as cluster:
        cluster.create_topic("t")
        async with Wire(cluster) as wire:
            error, _ = await answer(wire, batch(b"x" * 300))
            assert error == Error.MESSAGE_TOO_LARGE
            response = await wire.send(produce(batch(b"x" * 300)))
            message = response.responses[0].partition_responses[0].error_message
    assert message is not None
    assert "exceeds the maximum configured value of 200" in message


async def test_a_topics_max_message_bytes_bounds_the_whole_batch_in_bytes() -> None:
    """The topic's config, not the broker's, and on the batch as sent (log overhead
    included: Kafka's ``batch.sizeInBytes()``), so a batch of exactly the limit is taken."""
    data = batch(b"x" * 300)
    async with FakeCluster(1) as cluster:
        cluster.create_topic("t", configs={"max.message.bytes": str(len(data))})
        cluster.create_topic("tight", configs={"max.message.bytes": str(len(data) - 1)})
        async with Wire(cluster) as wire:
            assert await answer(wire, data) == (Error.NONE, 0)
            assert await answer(wire, data, topic="tight") == (Error.MESSAGE_TOO_LARGE, -1)
    assert len(cluster.records("tight", 0)) == 0


async def test_compacted_topics_take_no_null_keys(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("c", configs={"cleanup.policy": "compact"})
    leader = fake_cluster.leader("c", 0)[0]
    async with Wire(fake_cluster, leader) as wire:
        assert (await answer(wire, batch(b"a"), topic="c"))[0] == Error.INVALID_RECORD


async def test_unknown_topics_and_bad_acks(fake_cluster: FakeCluster, leader: int) -> None:
    async with Wire(fake_cluster, leader) as wire:
        assert await answer(wire, batch(b"a"), topic="nope") == (
            Error.UNKNOWN_TOPIC_OR_PARTITION,
            -1,
        )
        assert await answer(wire, batch(b"a"), acks=2) == (Error.INVALID_REQUIRED_ACKS, -1)


async def test_acks_zero_answers_nothing_and_an_error_closes_the_connection(
    fake_cluster: FakeCluster, leader: int
) -> None:
    async with Wire(fake_cluster, leader) as wire:
        wire.write(produce(batch(b"a"), acks=0))
        await fake_cluster.requests.wait_for("Produce")
        wire.write(produce(batch(b"b"), acks=0, topic="nope"))
        assert await wire.closed()
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"a"]


async def test_a_follower_names_the_leader(fake_cluster: FakeCluster, leader: int) -> None:
    """KIP-951 (v10+): NOT_LEADER_OR_FOLLOWER comes with the leader and its endpoint."""
    follower = (leader + 1) % 3
    request = produce_v10.ProduceRequest(
        acks=1,
        timeout_ms=1000,
        topic_data=(
            produce_v10.TopicProduceData(
                name="t",
                partition_data=(produce_v10.PartitionProduceData(index=0, records=batch(b"a")),),
            ),
        ),
    )
    async with Wire(fake_cluster, follower) as wire:
        response = await wire.send(request)
    result = response.responses[0].partition_responses[0]
    assert result.error_code == Error.NOT_LEADER_OR_FOLLOWER
    assert (result.current_leader.leader_id, result.current_leader.leader_epoch) == (leader, 0)
    assert [f"127.0.0.1:{e.port}" for e in response.node_endpoints] == [
        fake_cluster.address(leader)
    ]


async def test_v13_names_topics_by_id(fake_cluster: FakeCluster, leader: int) -> None:
    topic_id = fake_cluster.topic_id("t")

    def by_id(value: Any) -> Any:
        return produce_v13.ProduceRequest(
            acks=1,
            timeout_ms=1000,
            topic_data=(
                produce_v13.TopicProduceData(
                    topic_id=value,
                    partition_data=(
                        produce_v13.PartitionProduceData(index=0, records=batch(b"a")),
                    ),
                ),
            ),
        )

    async with Wire(fake_cluster, leader) as wire:
        known = await wire.send(by_id(topic_id))
        unknown = await wire.send(by_id(type(topic_id)(int=5)))
    assert known.responses[0].topic_id == topic_id
    assert known.responses[0].partition_responses[0].error_code == 0
    assert unknown.responses[0].partition_responses[0].error_code == Error.UNKNOWN_TOPIC_ID
