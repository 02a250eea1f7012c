"""What a ShareFetch acquires and when it answers: max_records, batch_size and the acquire modes,
long polls woken by new data, leader moves, the log start moving, control hooks."""

from __future__ import annotations

import asyncio

from kafkawire.messages.share_fetch import v2 as fetch_v2
from kafkawire.records import decode_batches
from kafkawire.testing.fake import Error, FakeCluster, HookContext
from tests.fake.wire import Wire

from .share import ACCEPT, GROUP, acknowledge, acquired, errors, fetch, states


def _three_batches_of_three(cluster: FakeCluster) -> None:
    for first in (0, 3, 6):
        cluster.produce("t", 0, [str(first + i).encode() for i in range(3)])


async def test_batch_optimized_rounds_max_records_up_to_a_whole_batch(
    cluster: FakeCluster, wire: Wire
) -> None:
    _three_batches_of_three(cluster)
    answer = await wire.send(fetch(cluster.topic_id("t"), 0, max_records=4))
    assert acquired(answer) == {0: [(0, 5, 1)]}


async def test_record_limit_acquires_exactly_max_records_and_sends_whole_batches(
    cluster: FakeCluster, wire: Wire
) -> None:
    _three_batches_of_three(cluster)
    answer = await wire.send(fetch(cluster.topic_id("t"), 0, max_records=4, mode=1))
    assert acquired(answer) == {0: [(0, 3, 1)]}
    (records,) = [p.records for t in answer.responses for p in t.partitions]
    assert [b.base_offset for b in decode_batches(bytes(records))] == [0, 3]
    assert states(cluster)[5] == ("AVAILABLE", 0)  # the rest of the batch, in flight


async def test_batch_size_cuts_acquired_ranges_at_batch_boundaries(
    cluster: FakeCluster, wire: Wire
) -> None:
    _three_batches_of_three(cluster)
    answer = await wire.send(fetch(cluster.topic_id("t"), 0, batch_size=4))
    assert acquired(answer) == {0: [(0, 5, 1), (6, 8, 1)]}


async def test_max_records_is_shared_by_the_partitions_of_a_fetch(
    cluster: FakeCluster,
) -> None:
    cluster.create_topic("two", partitions=2)
    topic = cluster.topic_id("two")
    for p in (0, 1):
        cluster.move_leader("two", p, 0)
        cluster.produce("two", p, [b"a", b"b"])
    cluster.set_group_config(GROUP, "share.auto.offset.reset", "earliest")
    async with Wire(cluster, 0) as wire:
        answer = await wire.send(fetch(topic, 0, [0, 1], max_records=2))
        assert acquired(answer) == {0: [(0, 1, 1)]}
        # The next epoch starts the turn at the other partition.
        assert acquired(await wire.send(fetch(topic, 1, max_records=2))) == {1: [(0, 1, 1)]}


async def test_a_long_poll_is_answered_when_records_arrive(cluster: FakeCluster) -> None:
    topic = cluster.topic_id("t")
    async with Wire(cluster, 0) as wire:
        await wire.send(fetch(topic, 0))
        waiting = asyncio.ensure_future(wire.send(fetch(topic, 1, max_wait_ms=30000, min_bytes=1)))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        cluster.produce("t", 0, [b"late"])
        answer = await asyncio.wait_for(waiting, 5)
        assert acquired(answer) == {0: [(0, 0, 1)]}


async def test_a_long_poll_is_answered_when_a_member_releases_records(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a"])
    await wire.send(fetch(topic, 0))
    async with Wire(cluster, 0) as other:
        await other.send(fetch(topic, 0, member="member-2"))
        waiting = asyncio.ensure_future(
            other.send(fetch(topic, 1, member="member-2", max_wait_ms=30000, min_bytes=1))
        )
        await asyncio.sleep(0.01)
        assert not waiting.done()
        await wire.send(acknowledge(topic, -1, {0: []}))  # member-1 closes its session
        answer = await asyncio.wait_for(waiting, 5)
        assert acquired(answer) == {0: [(0, 0, 2)]}


async def test_a_moved_leader_is_named_and_the_new_one_delivers_again(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a", b"b"])
    await wire.send(fetch(topic, 0))
    epoch = cluster.move_leader("t", 0, 1)
    moved = await wire.send(fetch(topic, 1))
    assert errors(moved) == {0: Error.NOT_LEADER_OR_FOLLOWER}
    (part,) = [p for t in moved.responses for p in t.partitions]
    assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (1, epoch)
    assert [(n.node_id, n.port) for n in moved.node_endpoints] == [
        (1, int(cluster.address(1).split(":")[1]))
    ]
    # The old leader dropped its share partition with the leadership (as Kafka's does).
    late = await wire.send(acknowledge(topic, 2, {0: [(0, 1, [ACCEPT])]}))
    assert errors(late) == {0: Error.UNKNOWN_TOPIC_OR_PARTITION}
    async with Wire(cluster, 1) as leader:
        # The new leader never saw the acquisition persisted: the records are delivered again,
        # their delivery not counted twice.
        again = await leader.send(fetch(topic, 0))
        assert acquired(again) == {0: [(0, 1, 1)]}


async def test_a_long_poll_is_answered_when_the_leadership_moves(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    await wire.send(fetch(topic, 0))
    waiting = asyncio.ensure_future(wire.send(fetch(topic, 1, max_wait_ms=30000, min_bytes=1)))
    await asyncio.sleep(0.01)
    cluster.move_leader("t", 0, 2)
    answer = await asyncio.wait_for(waiting, 5)
    assert errors(answer) == {0: Error.NOT_LEADER_OR_FOLLOWER}


async def test_acknowledging_on_a_leader_that_loaded_nothing_is_unknown_partition(
    cluster: FakeCluster, wire: Wire
) -> None:
    cluster.produce("t", 0, [b"a"])
    answer = await wire.send(fetch(cluster.topic_id("t"), 0, [], max_records=0))
    assert answer.error_code == 0
    ack = await wire.send(acknowledge(cluster.topic_id("t"), 1, {0: [(0, 0, [ACCEPT])]}))
    assert errors(ack) == {0: Error.UNKNOWN_TOPIC_OR_PARTITION}


async def test_deleted_records_move_the_start_offset(cluster: FakeCluster, wire: Wire) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a"])
    cluster.produce("t", 0, [b"b"])
    cluster.produce("t", 0, [b"c"])
    await wire.send(fetch(topic, 0, max_records=1))
    cluster.delete_records("t", 0, 2)
    answer = await wire.send(fetch(topic, 1))
    assert acquired(answer) == {0: [(2, 2, 1)]}
    share = cluster.share_partition(GROUP, "t", 0)
    assert share is not None
    assert share.start_offset == 2
    assert share.records[0].state.name == "ACQUIRED"  # below the start, until it comes back


async def test_control_hooks_answer_share_requests(cluster: FakeCluster, wire: Wire) -> None:
    topic = cluster.topic_id("t")

    def session_lost(request: object, ctx: HookContext) -> object:
        return fetch_v2.ShareFetchResponse(error_code=Error.SHARE_SESSION_NOT_FOUND)

    cluster.control(session_lost, api_key="ShareFetch")
    scripted = await wire.send(fetch(topic, 0))
    assert scripted.error_code == Error.SHARE_SESSION_NOT_FOUND
    assert (await wire.send(fetch(topic, 0))).error_code == 0
