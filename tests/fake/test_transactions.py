"""Producer ids and transactions against the fake: the coordinator's rules on the wire, and
kafkawire's transactional producer through them."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kafkawire.cluster import TopicPartition
from kafkawire.errors import ProducerFencedError
from kafkawire.messages.add_offsets_to_txn import v3 as add_offsets_v3
from kafkawire.messages.add_partitions_to_txn import v3 as add_partitions_v3
from kafkawire.messages.add_partitions_to_txn import v5 as add_partitions_v5
from kafkawire.messages.end_txn import v1 as end_txn_v1
from kafkawire.messages.end_txn import v3 as end_txn_v3
from kafkawire.messages.init_producer_id import v2 as init_v2
from kafkawire.messages.init_producer_id import v4 as init_v4
from kafkawire.messages.offset_fetch import v7 as offset_fetch_v7
from kafkawire.messages.produce import v9 as produce_v9
from kafkawire.messages.txn_offset_commit import v3 as txn_offset_commit_v3
from kafkawire.producer import Producer
from kafkawire.records import ControlType, decode_batches, decode_end_transaction_marker
from kafkawire.testing.fake import Error, FakeCluster, ManualClock

from .wire import Wire, batch

TXN = "tx"


def init(txn: str | None = TXN, *, timeout_ms: int = 60000, pid: int = -1, epoch: int = -1) -> Any:
    return init_v4.InitProducerIdRequest(
        transactional_id=txn,
        transaction_timeout_ms=timeout_ms,
        producer_id=pid,
        producer_epoch=epoch,
    )


def add(pid: int, epoch: int, *partitions: tuple[str, int]) -> Any:
    return add_partitions_v3.AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=TXN,
        v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=tuple(
            add_partitions_v3.AddPartitionsToTxnTopic(name=t, partitions=(p,))
            for t, p in partitions
        ),
    )


def end(pid: int, epoch: int, *, commit: bool) -> Any:
    return end_txn_v3.EndTxnRequest(
        transactional_id=TXN, producer_id=pid, producer_epoch=epoch, committed=commit
    )


def produce(records: bytes) -> Any:
    return produce_v9.ProduceRequest(
        transactional_id=TXN,
        acks=-1,
        timeout_ms=1000,
        topic_data=(
            produce_v9.TopicProduceData(
                name="t",
                partition_data=(produce_v9.PartitionProduceData(index=0, records=records),),
            ),
        ),
    )


def markers(cluster: FakeCluster) -> list[tuple[int, ControlType, int]]:
    """(offset, COMMIT or ABORT, producer epoch) of each marker in t-0."""
    log = cluster.state.partition("t", 0).log  # type: ignore[union-attr]
    found = []
    for stored in log.batches:
        if stored.marker is not None:
            (b,) = decode_batches(stored.data)
            marker = decode_end_transaction_marker(b.records[0])
            found.append((stored.base_offset, marker.type, stored.producer_epoch))
    return found


@pytest.fixture
async def cluster() -> Any:
    async with FakeCluster() as cluster:
        cluster.create_topic("t")
        yield cluster


def coordinator(cluster: FakeCluster, key: str = TXN) -> int:
    return cluster.state.coordinator_for(key)


async def committed(cluster: FakeCluster, group: str, *, stable: bool = False) -> Any:
    """(error code, offset, leader epoch, metadata) the group has for t-0 (OffsetFetch v7)."""
    request = offset_fetch_v7.OffsetFetchRequest(
        group_id=group,
        topics=(offset_fetch_v7.OffsetFetchRequestTopic(name="t", partition_indexes=(0,)),),
        require_stable=stable,
    )
    async with Wire(cluster, coordinator(cluster, group)) as wire:
        found = (await wire.send(request)).topics[0].partitions[0]
    return found.error_code, found.committed_offset, found.committed_leader_epoch, found.metadata


async def test_idempotent_producers_get_a_new_id_each_time(cluster: FakeCluster) -> None:
    async with Wire(cluster) as wire:
        first = await wire.send(init(None, timeout_ms=-1))
        second = await wire.send(init(None, timeout_ms=-1, pid=first.producer_id, epoch=0))
    assert first.producer_epoch == second.producer_epoch == 0
    assert first.producer_id != second.producer_id


async def test_a_transactional_id_is_bumped_and_its_open_transaction_aborted(
    cluster: FakeCluster,
) -> None:
    async with Wire(cluster, coordinator(cluster)) as wire:
        first = await wire.send(init())
        pid = first.producer_id
        again = await wire.send(init())
        assert (again.producer_id, again.producer_epoch) == (pid, 1)
        assert (await wire.send(add(pid, 1, ("t", 0)))).results_by_topic_v3_and_below[
            0
        ].results_by_partition[0].partition_error_code == 0
        leader = cluster.leader("t", 0)[0]
        async with Wire(cluster, leader) as data:
            written = await data.send(
                produce(batch(b"a", producer_id=pid, epoch=1, sequence=0, transactional=True))
            )
            assert written.responses[0].partition_responses[0].error_code == 0
        fencing = await wire.send(init())
        assert fencing.error_code == Error.CONCURRENT_TRANSACTIONS
        assert markers(cluster) == [(1, ControlType.ABORT, 2)]  # aborted at the bumped epoch
        retried = await wire.send(init())
        assert (retried.producer_id, retried.producer_epoch) == (pid, 3)
        # The old epoch is fenced everywhere.
        assert (await wire.send(end(pid, 1, commit=True))).error_code == Error.PRODUCER_FENCED
        old = end_txn_v1.EndTxnRequest(
            transactional_id=TXN, producer_id=pid, producer_epoch=1, committed=True
        )
        assert (await wire.send(old)).error_code == Error.INVALID_PRODUCER_EPOCH


async def test_kip_360_bumps_with_the_producer_id_and_epoch_given(cluster: FakeCluster) -> None:
    async with Wire(cluster, coordinator(cluster)) as wire:
        first = await wire.send(init())
        pid = first.producer_id
        bumped = await wire.send(init(pid=pid, epoch=0))
        retry = await wire.send(init(pid=pid, epoch=0))  # the answer was lost: same again
        stale = await wire.send(init(pid=pid, epoch=5))
        other = await wire.send(init(pid=pid + 1, epoch=1))
        old = await wire.send(
            init_v2.InitProducerIdRequest(transactional_id=TXN, transaction_timeout_ms=-1)
        )
    assert (bumped.producer_id, bumped.producer_epoch) == (pid, 1)
    assert (retry.producer_id, retry.producer_epoch) == (pid, 1)
    assert stale.error_code == other.error_code == Error.PRODUCER_FENCED
    assert old.error_code == Error.INVALID_TRANSACTION_TIMEOUT


async def test_routing_and_bad_requests(cluster: FakeCluster) -> None:
    elsewhere = (coordinator(cluster) + 1) % 3
    async with Wire(cluster, elsewhere) as wire:
        assert (await wire.send(init())).error_code == Error.NOT_COORDINATOR
        assert (await wire.send(init(""))).error_code == Error.INVALID_REQUEST
        assert (await wire.send(end(1, 0, commit=True))).error_code == Error.NOT_COORDINATOR
    async with Wire(cluster, coordinator(cluster)) as wire:
        assert (await wire.send(init(timeout_ms=10**9))).error_code == (
            Error.INVALID_TRANSACTION_TIMEOUT
        )
        assert (await wire.send(end(1, 0, commit=True))).error_code == (
            Error.INVALID_PRODUCER_ID_MAPPING
        )


async def test_end_txn_rules(cluster: FakeCluster) -> None:
    async with Wire(cluster, coordinator(cluster)) as wire:
        ids = await wire.send(init())
        pid, epoch = ids.producer_id, ids.producer_epoch
        assert (await wire.send(end(pid, epoch, commit=True))).error_code == Error.INVALID_TXN_STATE
        answer = await wire.send(add(pid, epoch, ("t", 0), ("nope", 0)))
        errors = {
            t.name: t.results_by_partition[0].partition_error_code
            for t in answer.results_by_topic_v3_and_below
        }
        assert errors == {
            "t": Error.OPERATION_NOT_ATTEMPTED,
            "nope": Error.UNKNOWN_TOPIC_OR_PARTITION,
        }
        await wire.send(add(pid, epoch, ("t", 0)))
        assert (await wire.send(end(pid, epoch, commit=True))).error_code == 0
        assert (await wire.send(end(pid, epoch, commit=True))).error_code == 0  # a retry
        assert (
            await wire.send(end(pid, epoch, commit=False))
        ).error_code == Error.INVALID_TXN_STATE
    assert markers(cluster) == [(0, ControlType.COMMIT, 0)]


async def test_a_transactional_batch_needs_its_partition_in_the_transaction(
    cluster: FakeCluster,
) -> None:
    async with Wire(cluster, coordinator(cluster)) as wire:
        ids = await wire.send(init())
    pid = ids.producer_id
    async with Wire(cluster, cluster.leader("t", 0)[0]) as data:
        refused = await data.send(
            produce(batch(b"a", producer_id=pid, epoch=0, sequence=0, transactional=True))
        )
    assert refused.responses[0].partition_responses[0].error_code == Error.INVALID_TXN_STATE
    assert cluster.records("t", 0) == []


async def test_batched_add_partitions_v5_verifies_only(cluster: FakeCluster) -> None:
    async with Wire(cluster, coordinator(cluster)) as wire:
        ids = await wire.send(init())
        pid = ids.producer_id

        def ask(verify_only: bool) -> Any:
            return add_partitions_v5.AddPartitionsToTxnRequest(
                transactions=(
                    add_partitions_v5.AddPartitionsToTxnTransaction(
                        transactional_id=TXN,
                        producer_id=pid,
                        producer_epoch=0,
                        verify_only=verify_only,
                        topics=(
                            add_partitions_v5.AddPartitionsToTxnTopic(name="t", partitions=(0,)),
                        ),
                    ),
                )
            )

        def code(response: Any) -> int:
            return int(
                response.results_by_transaction[0]
                .topic_results[0]
                .results_by_partition[0]
                .partition_error_code
            )

        assert code(await wire.send(ask(True))) == Error.INVALID_TXN_STATE
        assert code(await wire.send(ask(False))) == 0
        assert code(await wire.send(ask(True))) == 0


async def test_an_open_transaction_times_out_and_is_aborted() -> None:
    clock = ManualClock()
    async with FakeCluster(clock=clock) as cluster, Wire(cluster, coordinator(cluster)) as wire:
        cluster.create_topic("t")
        ids = await wire.send(init(timeout_ms=20_000))
        pid = ids.producer_id
        await wire.send(add(pid, 0, ("t", 0)))
        async with Wire(cluster, cluster.leader("t", 0)[0]) as data:
            await data.send(
                produce(batch(b"a", producer_id=pid, epoch=0, sequence=0, transactional=True))
            )
        clock.advance(19.999)
        assert cluster.offsets("t", 0).last_stable_offset == 0
        clock.advance(0.001)
        assert markers(cluster) == [(1, ControlType.ABORT, 1)]
        assert cluster.offsets("t", 0).last_stable_offset == 2
        assert (await wire.send(end(pid, 0, commit=True))).error_code == Error.PRODUCER_FENCED


async def test_txn_offset_commit_is_held_until_the_transaction_commits(
    cluster: FakeCluster,
) -> None:
    group = "g"
    commit = txn_offset_commit_v3.TxnOffsetCommitRequest(
        transactional_id=TXN,
        group_id=group,
        producer_id=0,
        producer_epoch=0,
        topics=(
            txn_offset_commit_v3.TxnOffsetCommitRequestTopic(
                name="t",
                partitions=(
                    txn_offset_commit_v3.TxnOffsetCommitRequestPartition(
                        partition_index=0,
                        committed_offset=7,
                        committed_leader_epoch=0,
                        committed_metadata="m",
                    ),
                ),
            ),
        ),
    )
    async with (
        Wire(cluster, coordinator(cluster)) as txn,
        Wire(cluster, coordinator(cluster, group)) as grp,
    ):
        for outcome in (False, True):
            ids = await txn.send(init())
            pid, epoch = ids.producer_id, ids.producer_epoch
            request = dataclasses.replace(commit, producer_id=pid, producer_epoch=epoch)
            early = await grp.send(request)
            assert early.topics[0].partitions[0].error_code == Error.INVALID_TXN_STATE
            add = add_offsets_v3.AddOffsetsToTxnRequest(
                transactional_id=TXN, producer_id=pid, producer_epoch=epoch, group_id=group
            )
            assert (await txn.send(add)).error_code == 0
            assert (await grp.send(request)).topics[0].partitions[0].error_code == 0
            assert cluster.state.pending_transactional_offsets(group) == {("t", 0)}
            # KIP-447: a consumer that asks for stable offsets waits; others see the last.
            assert await committed(cluster, group, stable=True) == (
                Error.UNSTABLE_OFFSET_COMMIT,
                -1,
                -1,
                "",
            )
            assert await committed(cluster, group) == (0, -1, -1, "")
            assert (await txn.send(end(pid, epoch, commit=outcome))).error_code == 0
            assert cluster.state.pending_transactional_offsets(group) == frozenset()
    assert await committed(cluster, group, stable=True) == (0, 7, 0, "m")


async def test_txn_offset_commit_is_checked_by_the_group_after_the_transaction(
    cluster: FakeCluster,
) -> None:
    """A member and generation the group does not know: ILLEGAL_GENERATION, once the
    transaction's own checks (KIP-890's verification) pass, and nothing is held."""
    group = "g"
    async with (
        Wire(cluster, coordinator(cluster)) as txn,
        Wire(cluster, coordinator(cluster, group)) as grp,
    ):
        ids = await txn.send(init())
        pid, epoch = ids.producer_id, ids.producer_epoch
        stranger = txn_offset_commit_v3.TxnOffsetCommitRequest(
            transactional_id=TXN,
            group_id=group,
            producer_id=pid,
            producer_epoch=epoch,
            generation_id=5,
            member_id="m-1",
            topics=(
                txn_offset_commit_v3.TxnOffsetCommitRequestTopic(
                    name="t",
                    partitions=(
                        txn_offset_commit_v3.TxnOffsetCommitRequestPartition(
                            partition_index=0, committed_offset=7
                        ),
                    ),
                ),
            ),
        )
        unverified = await grp.send(stranger)
        assert unverified.topics[0].partitions[0].error_code == Error.INVALID_TXN_STATE
        add = add_offsets_v3.AddOffsetsToTxnRequest(
            transactional_id=TXN, producer_id=pid, producer_epoch=epoch, group_id=group
        )
        assert (await txn.send(add)).error_code == 0
        refused = await grp.send(stranger)
        assert refused.topics[0].partitions[0].error_code == Error.ILLEGAL_GENERATION
        assert cluster.state.pending_transactional_offsets(group) == frozenset()


async def test_the_producer_commits_aborts_and_is_fenced(cluster: FakeCluster) -> None:
    async with Producer(cluster.bootstrap, transactional_id=TXN) as producer:
        async with producer.transaction():
            await producer.send("t", b"one", partition=0)
            await producer.send_offsets_to_transaction({TopicPartition("t", 0): 3}, "readers")
        producer.begin_transaction()
        await producer.send_and_wait("t", b"two", partition=0)
        async with Producer(cluster.bootstrap, transactional_id=TXN):  # fences the first
            pass
        with pytest.raises(ProducerFencedError):
            await producer.commit_transaction()
    assert [kind for _, kind, _ in markers(cluster)] == [ControlType.COMMIT, ControlType.ABORT]
    assert await committed(cluster, "readers") == (0, 3, -1, "")
    assert [r.value for r in cluster.records("t", 0)] == [b"one", b"two"]
