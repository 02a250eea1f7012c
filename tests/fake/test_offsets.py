"""ListOffsets, OffsetForLeaderEpoch and DeleteRecords against the fake, through kafkawire's
admin and consumer and on the wire."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.admin import EARLIEST, LATEST, MAX_TIMESTAMP, Admin
from kafkawire.cluster import TopicPartition
from kafkawire.consumer import Consumer
from kafkawire.errors import OffsetOutOfRangeError
from kafkawire.messages.list_offsets import v4 as list_offsets_v4
from kafkawire.messages.list_offsets import v7 as list_offsets_v7
from kafkawire.messages.offset_for_leader_epoch import v4 as epochs_v4
from kafkawire.testing.fake import Error, FakeCluster

from .wire import Wire

TP = TopicPartition("t", 0)


@pytest.fixture
def leader(fake_cluster: FakeCluster) -> int:
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, [b"a", b"b"], timestamp=1000)
    fake_cluster.produce("t", 0, [b"c"], timestamp=5000)
    fake_cluster.produce("t", 0, [b"d", b"e"], timestamp=3000)
    return fake_cluster.leader("t", 0)[0]


def list_offsets(timestamp: int, *, isolation: int = 0, leader_epoch: int = -1) -> Any:
    return list_offsets_v7.ListOffsetsRequest(
        replica_id=-1,
        isolation_level=isolation,
        topics=(
            list_offsets_v7.ListOffsetsTopic(
                name="t",
                partitions=(
                    list_offsets_v7.ListOffsetsPartition(
                        partition_index=0, timestamp=timestamp, current_leader_epoch=leader_epoch
                    ),
                ),
            ),
        ),
    )


async def test_earliest_latest_max_and_by_time(fake_cluster: FakeCluster, leader: int) -> None:
    async with Admin(fake_cluster.bootstrap) as admin:
        earliest = (await admin.list_offsets({TP: EARLIEST}))[TP]
        latest = (await admin.list_offsets({TP: LATEST}))[TP]
        newest = (await admin.list_offsets({TP: MAX_TIMESTAMP}))[TP]
        by_time = (await admin.list_offsets({TP: 2000}))[TP]
        too_late = (await admin.list_offsets({TP: 9000}))[TP]
    assert (earliest.offset, latest.offset) == (0, 5)
    assert (newest.offset, newest.timestamp) == (2, 5000)
    assert (by_time.offset, by_time.timestamp) == (2, 5000)
    assert too_late.offset == -1


async def test_the_consumers_offset_lookups(fake_cluster: FakeCluster, leader: int) -> None:
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap) as consumer:
        assert await consumer.beginning_offsets([TP]) == {TP: 0}
        assert await consumer.end_offsets([TP]) == {TP: 5}
        found = await consumer.offsets_for_times({TP: 2500})
    assert found[TP] is not None
    assert found[TP].offset == 2


async def test_read_committed_latest_is_the_last_stable_offset(
    fake_cluster: FakeCluster, leader: int
) -> None:
    from .wire import batch

    log = fake_cluster.state.partition("t", 0).log  # type: ignore[union-attr]
    from kafkawire.records import decode_batches

    raw = batch(b"txn", producer_id=77, epoch=0, sequence=0, transactional=True)
    (parsed,) = decode_batches(raw)
    log.append(parsed, raw, 0)  # type: ignore[arg-type]
    async with Wire(fake_cluster, leader) as wire:
        uncommitted = await wire.send(list_offsets(-1))
        committed = await wire.send(list_offsets(-1, isolation=1))
    assert uncommitted.topics[0].partitions[0].offset == 6
    assert committed.topics[0].partitions[0].offset == 5


async def test_leader_epochs_in_answers_and_checks(fake_cluster: FakeCluster, leader: int) -> None:
    epoch = fake_cluster.move_leader("t", 0, leader)
    fake_cluster.produce("t", 0, [b"f"], timestamp=9000)
    async with Wire(fake_cluster, leader) as wire:
        latest = (await wire.send(list_offsets(-1))).topics[0].partitions[0]
        early = (await wire.send(list_offsets(-2))).topics[0].partitions[0]
        late = (await wire.send(list_offsets(8000))).topics[0].partitions[0]
        fenced = (await wire.send(list_offsets(-1, leader_epoch=0))).topics[0].partitions[0]
    assert (latest.offset, latest.leader_epoch) == (6, epoch)
    assert (early.offset, early.leader_epoch) == (0, 0)
    assert (late.offset, late.leader_epoch) == (5, epoch)
    assert fenced.error_code == Error.FENCED_LEADER_EPOCH
    old = list_offsets_v4.ListOffsetsRequest(
        replica_id=-1,
        topics=(
            list_offsets_v4.ListOffsetsTopic(
                name="t",
                partitions=(list_offsets_v4.ListOffsetsPartition(partition_index=0, timestamp=-1),),
            ),
        ),
    )
    async with Wire(fake_cluster, (leader + 1) % 3) as wire:
        elsewhere = (await wire.send(old)).topics[0].partitions[0]
    assert elsewhere.error_code == Error.NOT_LEADER_OR_FOLLOWER


def end_of(epoch: int, *, current: int = -1, replica_id: int = -1) -> Any:
    return epochs_v4.OffsetForLeaderEpochRequest(
        replica_id=replica_id,
        topics=(
            epochs_v4.OffsetForLeaderTopic(
                topic="t",
                partitions=(
                    epochs_v4.OffsetForLeaderPartition(
                        partition=0, current_leader_epoch=current, leader_epoch=epoch
                    ),
                ),
            ),
        ),
    )


async def test_offset_for_leader_epoch_follows_the_epoch_cache(
    fake_cluster: FakeCluster, leader: int
) -> None:
    fake_cluster.move_leader("t", 0, leader)  # epoch 1 from 5
    fake_cluster.produce("t", 0, [b"f", b"g"])  # 5, 6
    fake_cluster.move_leader("t", 0, leader)  # epoch 2 from 7
    fake_cluster.produce("t", 0, [b"h"])  # 7
    answers = []
    async with Wire(fake_cluster, leader) as wire:
        for epoch in (0, 1, 2, 3):
            result = (await wire.send(end_of(epoch))).topics[0].partitions[0]
            answers.append((result.error_code, result.leader_epoch, result.end_offset))
        fenced = (await wire.send(end_of(1, current=1))).topics[0].partitions[0]
    assert answers == [(0, 0, 5), (0, 1, 7), (0, 2, 8), (0, -1, -1)]
    assert fenced.error_code == Error.FENCED_LEADER_EPOCH
    async with Wire(fake_cluster, (leader + 1) % 3) as wire:
        follower = (await wire.send(end_of(1))).topics[0].partitions[0]
        replica = (await wire.send(end_of(1, replica_id=-2))).topics[0].partitions[0]
    assert follower.error_code == Error.NOT_LEADER_OR_FOLLOWER  # a consumer's must reach the leader
    assert (replica.error_code, replica.end_offset) == (0, 7)


async def test_an_epoch_never_written_ends_where_the_next_starts(
    fake_cluster: FakeCluster, leader: int
) -> None:
    fake_cluster.move_leader("t", 0, leader)  # epoch 1 at 5, never written
    fake_cluster.move_leader("t", 0, leader)  # epoch 2 at 5 replaces it
    async with Wire(fake_cluster, leader) as wire:
        one = (await wire.send(end_of(1))).topics[0].partitions[0]
    assert (one.leader_epoch, one.end_offset) == (0, 5)


async def test_delete_records_moves_the_log_start(fake_cluster: FakeCluster, leader: int) -> None:
    async with Admin(fake_cluster.bootstrap) as admin:
        deleted = await admin.delete_records({TP: 3})
        assert deleted[TP] == 3
        assert (await admin.list_offsets({TP: EARLIEST}))[TP].offset == 3
        everything = await admin.delete_records({TP: -1})
        assert everything[TP] == 5
        beyond = await admin.delete_records({TP: 99})
    assert isinstance(beyond.errors[TP], OffsetOutOfRangeError)
    assert fake_cluster.offsets("t", 0).log_start_offset == 5
    assert fake_cluster.records("t", 0) == []
