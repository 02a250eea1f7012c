"""Fetch against the fake: kafkawire's consumer and client, then the broker's rules on the wire
(byte limits, long polls, epochs, read_committed, topic ids)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from kafkawire.client import KafkaClient
from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.messages.fetch import v11 as fetch_v11
from kafkawire.messages.fetch import v12 as fetch_v12
from kafkawire.messages.fetch import v16 as fetch_v16
from kafkawire.producer import Producer
from kafkawire.records import decode_batches
from kafkawire.testing.fake import Error, FakeCluster

from .wire import Wire, commit_then_abort


def fetch(
    offset: int = 0,
    *,
    topic: str = "t",
    partition_max: int = 1 << 20,
    max_bytes: int = 1 << 20,
    max_wait_ms: int = 0,
    min_bytes: int = 1,
    isolation: int = 0,
    leader_epoch: int = -1,
) -> Any:
    return fetch_v11.FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        isolation_level=isolation,
        topics=(
            fetch_v11.FetchTopic(
                topic=topic,
                partitions=(
                    fetch_v11.FetchPartition(
                        partition=0,
                        fetch_offset=offset,
                        partition_max_bytes=partition_max,
                        current_leader_epoch=leader_epoch,
                    ),
                ),
            ),
        ),
    )


def offsets_in(records: Any) -> list[int]:
    return [r.offset for b in decode_batches(records) for r in b.records]


@pytest.fixture
def leader(fake_cluster: FakeCluster) -> int:
    fake_cluster.create_topic("t")
    for i in range(3):
        fake_cluster.produce("t", 0, [b"%d-%d" % (i, j) for j in range(4)])  # 3 batches of 4
    return fake_cluster.leader("t", 0)[0]


async def test_a_consumer_without_a_group_reads_every_partition(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("events", partitions=3)
    for p in range(3):
        fake_cluster.produce("events", p, [b"p%d-%d" % (p, i) for i in range(5)])
    got: list[Any] = []
    async with Consumer(
        "events", bootstrap_servers=fake_cluster.bootstrap, auto_offset_reset="earliest"
    ) as consumer:
        while len(got) < 15:
            for records in (await asyncio.wait_for(consumer.getmany(timeout_ms=200), 5)).values():
                got.extend(records)
    assert sorted((r.partition, r.offset) for r in got) == [
        (p, o) for p in range(3) for o in range(5)
    ]
    assert {r.leader_epoch for r in got} == {0}
    assert len(fake_cluster.requests.of("Fetch")) >= 3  # one leader per partition


async def test_the_client_reads_a_range_and_the_high_watermark(
    fake_cluster: FakeCluster, leader: int
) -> None:
    async with KafkaClient(fake_cluster.bootstrap) as client:
        result = await client.fetch("t", 0, 5, max_wait_ms=1)
        records = [r async for r in client.records("t", 0, 0, stop_at_end=True)]
    assert result.high_watermark == 12
    assert [r.offset for r in result.records] == list(range(5, 12))  # from the offset asked
    assert [r.value for r in records][:2] == [b"0-0", b"0-1"]
    assert len(records) == 12


async def test_whole_batches_from_the_one_holding_the_offset(
    fake_cluster: FakeCluster, leader: int
) -> None:
    async with Wire(fake_cluster, leader) as wire:
        response = await wire.send(fetch(5))
    data = response.responses[0].partitions[0]
    assert (data.error_code, data.high_watermark, data.last_stable_offset) == (0, 12, 12)
    assert data.log_start_offset == 0
    assert data.aborted_transactions is None
    assert offsets_in(data.records) == list(range(4, 12))  # the batch of 4-7 whole


async def test_byte_limits_cut_the_last_batch_but_return_the_first_whole(
    fake_cluster: FakeCluster, leader: int
) -> None:
    size = len(fake_cluster.state.partition("t", 0).log.batches[0].data)  # type: ignore[union-attr]
    async with Wire(fake_cluster, leader) as wire:
        cut = (await wire.send(fetch(0, partition_max=size + 10))).responses[0].partitions[0]
        tiny = (await wire.send(fetch(0, partition_max=1))).responses[0].partitions[0]
        capped = (await wire.send(fetch(0, max_bytes=size * 2))).responses[0].partitions[0]
    assert len(cut.records) == size + 10  # a trailing batch cut short, which readers drop
    assert offsets_in(cut.records) == [0, 1, 2, 3]
    assert offsets_in(tiny.records) == [0, 1, 2, 3]  # KIP-74: the first batch whole
    assert len(capped.records) == size * 2


async def test_out_of_range_offsets(fake_cluster: FakeCluster, leader: int) -> None:
    fake_cluster.delete_records("t", 0, 4)
    async with Wire(fake_cluster, leader) as wire:
        below = (await wire.send(fetch(3))).responses[0].partitions[0]
        end = (await wire.send(fetch(12))).responses[0].partitions[0]
        past = (await wire.send(fetch(13))).responses[0].partitions[0]
    assert below.error_code == past.error_code == Error.OFFSET_OUT_OF_RANGE
    assert below.high_watermark == -1  # an error answers no offsets
    assert (end.error_code, end.records, end.log_start_offset) == (0, b"", 4)


async def test_a_long_poll_is_woken_by_new_data(fake_cluster: FakeCluster, leader: int) -> None:
    async with Wire(fake_cluster, leader) as wire:
        wire.write(fetch(12, max_wait_ms=5000))
        reading = asyncio.create_task(wire.read(fetch()))
        await fake_cluster.requests.wait_for("Fetch")
        await asyncio.sleep(0.01)
        assert not reading.done()
        fake_cluster.produce("t", 0, [b"new"])
        data = (await asyncio.wait_for(reading, 1)).responses[0].partitions[0]
    assert offsets_in(data.records) == [12]


async def test_a_long_poll_ends_at_max_wait_with_nothing(
    fake_cluster: FakeCluster, leader: int
) -> None:
    async with Wire(fake_cluster, leader) as wire:
        data = (await wire.send(fetch(12, max_wait_ms=20))).responses[0].partitions[0]
    assert (data.error_code, data.records) == (0, b"")


async def test_leader_epochs_are_checked_before_leadership(
    fake_cluster: FakeCluster, leader: int
) -> None:
    epoch = fake_cluster.move_leader("t", 0, leader)  # same leader, epoch 1
    follower = (leader + 1) % 3
    async with Wire(fake_cluster, leader) as wire:
        fenced = (await wire.send(fetch(0, leader_epoch=0))).responses[0].partitions[0]
        ahead = (await wire.send(fetch(0, leader_epoch=2))).responses[0].partitions[0]
        right = (await wire.send(fetch(0, leader_epoch=epoch))).responses[0].partitions[0]
    async with Wire(fake_cluster, follower) as wire:
        stale = (await wire.send(fetch(0, leader_epoch=0))).responses[0].partitions[0]
        elsewhere = (await wire.send(fetch(0, leader_epoch=epoch))).responses[0].partitions[0]
    assert fenced.error_code == stale.error_code == Error.FENCED_LEADER_EPOCH
    assert ahead.error_code == Error.UNKNOWN_LEADER_EPOCH
    assert right.error_code == 0
    assert elsewhere.error_code == Error.NOT_LEADER_OR_FOLLOWER


async def test_v16_names_the_leader_with_a_stale_leader_error(
    fake_cluster: FakeCluster, leader: int
) -> None:
    follower = (leader + 1) % 3
    request = fetch_v16.FetchRequest(
        max_wait_ms=0,
        min_bytes=1,
        topics=(
            fetch_v16.FetchTopic(
                topic_id=fake_cluster.topic_id("t"),
                partitions=(
                    fetch_v16.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=100),
                ),
            ),
        ),
    )
    async with Wire(fake_cluster, follower) as wire:
        response = await wire.send(request)
    data = response.responses[0].partitions[0]
    assert data.error_code == Error.NOT_LEADER_OR_FOLLOWER
    assert (data.current_leader.leader_id, data.current_leader.leader_epoch) == (leader, 0)
    assert [e.node_id for e in response.node_endpoints] == [leader]


async def test_topic_ids_from_v13(fake_cluster: FakeCluster, leader: int) -> None:
    def by_id(topic_id: uuid.UUID) -> Any:
        return fetch_v16.FetchRequest(
            max_wait_ms=0,
            min_bytes=1,
            session_epoch=-1,
            topics=(
                fetch_v16.FetchTopic(
                    topic_id=topic_id,
                    partitions=(
                        fetch_v16.FetchPartition(
                            partition=0, fetch_offset=0, partition_max_bytes=100
                        ),
                    ),
                ),
            ),
        )

    async with Wire(fake_cluster, leader) as wire:
        known = await wire.send(by_id(fake_cluster.topic_id("t")))
        unknown = await wire.send(by_id(uuid.uuid4()))
    assert known.responses[0].topic_id == fake_cluster.topic_id("t")
    assert offsets_in(known.responses[0].partitions[0].records)[:4] == [0, 1, 2, 3]
    assert unknown.responses[0].partitions[0].error_code == Error.UNKNOWN_TOPIC_ID


async def test_a_diverging_epoch_after_truncation(fake_cluster: FakeCluster, leader: int) -> None:
    """KIP-320 (v12+): a fetch whose last fetched epoch ended earlier in the new leader's log
    gets the epoch's end instead of records."""
    fake_cluster.move_leader("t", 0, leader)  # epoch 1 starts at 12
    fake_cluster.produce("t", 0, [b"e1-a", b"e1-b"])  # 12, 13 in epoch 1
    epoch = fake_cluster.truncate("t", 0, 12)  # epoch 2 starts at 12: 12 and 13 are lost

    def after(offset: int, last_epoch: int) -> Any:
        return fetch_v12.FetchRequest(
            max_wait_ms=0,
            min_bytes=1,
            topics=(
                fetch_v12.FetchTopic(
                    topic="t",
                    partitions=(
                        fetch_v12.FetchPartition(
                            partition=0,
                            fetch_offset=offset,
                            current_leader_epoch=epoch,
                            last_fetched_epoch=last_epoch,
                            partition_max_bytes=1000,
                        ),
                    ),
                ),
            ),
        )

    async with Wire(fake_cluster, leader) as wire:
        diverged = (await wire.send(after(14, 1))).responses[0].partitions[0]
        fine = (await wire.send(after(12, 0))).responses[0].partitions[0]
    assert (diverged.diverging_epoch.epoch, diverged.diverging_epoch.end_offset) == (0, 12)
    assert diverged.records == b""
    assert diverged.error_code == 0
    assert fine.diverging_epoch.epoch == -1
    assert fine.error_code == 0


async def test_read_committed_stops_at_the_open_transaction_and_lists_aborted_ones(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, transactional_id="tx") as producer:
        await commit_then_abort(producer, "t")
        producer.begin_transaction()
        await producer.send_and_wait("t", b"open", partition=0)
        leader = fake_cluster.leader("t", 0)[0]
        async with Wire(fake_cluster, leader) as wire:
            committed = (await wire.send(fetch(0, isolation=1))).responses[0].partitions[0]
            everything = (await wire.send(fetch(0))).responses[0].partitions[0]
        await producer.abort_transaction()
    # kept@0, COMMIT@1, dropped@2, ABORT@3, open@4
    assert (committed.high_watermark, committed.last_stable_offset) == (5, 4)
    assert offsets_in(committed.records) == [0, 1, 2, 3]  # markers are batches too
    assert [(t.producer_id > 0, t.first_offset) for t in committed.aborted_transactions] == [
        (True, 2)
    ]
    assert offsets_in(everything.records) == [0, 1, 2, 3, 4]
    async with Consumer(
        bootstrap_servers=fake_cluster.bootstrap,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    ) as consumer:
        consumer.assign([TopicPartition("t", 0)])
        got = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 5)
    assert [r.value for r in got[TopicPartition("t", 0)]] == [b"kept"]
