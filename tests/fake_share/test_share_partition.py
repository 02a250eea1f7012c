"""One share partition on the wire: acquisition locks on the cluster clock, delivery counts,
each acknowledge type, gaps, and two members sharing the partition."""

from __future__ import annotations

from kafkawire.testing.fake import Error, FakeCluster, ManualClock
from tests.fake.wire import Wire

from .share import (
    ACCEPT,
    GAP,
    GROUP,
    REJECT,
    RELEASE,
    RENEW,
    acknowledge,
    acquired,
    errors,
    fetch,
    states,
)


async def test_an_expired_lock_makes_records_available_again_with_their_delivery_count(
    cluster: FakeCluster, wire: Wire, clock: ManualClock
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a", b"b", b"c"])
    first = await wire.send(fetch(topic, 0))
    assert first.acquisition_lock_timeout_ms == 30000
    assert acquired(first) == {0: [(0, 2, 1)]}
    clock.advance(29.9)
    assert states(cluster) == dict.fromkeys(range(3), ("ACQUIRED", 1))
    clock.advance(0.1)
    assert states(cluster) == dict.fromkeys(range(3), ("AVAILABLE", 1))
    again = await wire.send(fetch(topic, 1))
    assert acquired(again) == {0: [(0, 2, 2)]}


async def test_the_delivery_count_limit_archives_records_and_moves_the_start(
    clock: ManualClock,
) -> None:
    async with FakeCluster(clock=clock, share_group_delivery_count_limit=2) as cluster:
        cluster.create_topic("t")
        cluster.move_leader("t", 0, 0)
        cluster.set_group_config(GROUP, "share.auto.offset.reset", "earliest")
        topic = cluster.topic_id("t")
        cluster.produce("t", 0, [b"a", b"b"])
        async with Wire(cluster, 0) as wire:
            assert acquired(await wire.send(fetch(topic, 0))) == {0: [(0, 1, 1)]}
            clock.advance(30)
            assert acquired(await wire.send(fetch(topic, 1))) == {0: [(0, 1, 2)]}
            clock.advance(30)
            share = cluster.share_partition(GROUP, "t", 0)
            assert share is not None
            assert (share.start_offset, share.end_offset, share.records) == (2, 2, {})
            assert acquired(await wire.send(fetch(topic, 2))) == {}


async def test_release_makes_records_available_and_accept_and_reject_end_them(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a", b"b", b"c", b"d"])
    await wire.send(fetch(topic, 0))
    answer = await wire.send(
        acknowledge(topic, 1, {0: [(0, 3, [ACCEPT, RELEASE, REJECT, RELEASE])]})
    )
    assert (answer.error_code, errors(answer)) == (0, {0: 0})
    assert states(cluster) == {1: ("AVAILABLE", 1), 2: ("ARCHIVED", 1), 3: ("AVAILABLE", 1)}
    share = cluster.share_partition(GROUP, "t", 0)
    assert share is not None
    assert share.start_offset == 1
    assert acquired(await wire.send(fetch(topic, 2))) == {0: [(1, 1, 2), (3, 3, 2)]}


async def test_acknowledging_what_one_does_not_hold_changes_nothing(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a", b"b", b"c"])
    await wire.send(fetch(topic, 0, max_records=2, mode=1))
    # Offset 2 is available, not acquired: the whole acknowledgement is refused.
    answer = await wire.send(acknowledge(topic, 1, {0: [(0, 2, [ACCEPT])]}))
    assert errors(answer) == {0: Error.INVALID_RECORD_STATE}
    assert states(cluster) == {0: ("ACQUIRED", 1), 1: ("ACQUIRED", 1), 2: ("AVAILABLE", 0)}
    beyond = await wire.send(acknowledge(topic, 2, {0: [(5, 6, [ACCEPT])]}))
    assert errors(beyond) == {0: Error.INVALID_REQUEST}


async def test_malformed_acknowledgement_batches_are_invalid_requests(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a", b"b", b"c"])
    await wire.send(fetch(topic, 0))
    for epoch, batches in enumerate(
        [
            [(2, 1, [ACCEPT])],  # first after last
            [(0, 2, [ACCEPT, ACCEPT])],  # neither one type nor one per offset
            [(0, 1, [ACCEPT]), (0, 2, [ACCEPT])],  # overlapping
            [(0, 2, [])],  # no types
            [(0, 2, [9])],  # no such type
        ],
        start=1,
    ):
        answer = await wire.send(acknowledge(topic, epoch, {0: batches}))
        assert errors(answer) == {0: Error.INVALID_REQUEST}, batches
    # Batches that meet at one offset pass those checks; the second finds it acknowledged.
    twice = await wire.send(acknowledge(topic, 6, {0: [(0, 0, [ACCEPT]), (0, 1, [REJECT])]}))
    assert errors(twice) == {0: Error.INVALID_RECORD_STATE}
    assert states(cluster) == dict.fromkeys(range(3), ("ACQUIRED", 1))


async def test_renew_restarts_the_lock_from_version_2_only(
    cluster: FakeCluster, wire: Wire, clock: ManualClock
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a", b"b"])
    await wire.send(fetch(topic, 0))
    clock.advance(20)
    v1 = await wire.send(acknowledge(topic, 1, {0: [(0, 0, [RENEW])]}, version=1))
    assert errors(v1) == {0: Error.INVALID_REQUEST}
    unflagged = await wire.send(acknowledge(topic, 2, {0: [(0, 0, [RENEW])]}))
    assert errors(unflagged) == {0: Error.INVALID_REQUEST}
    renewed = await wire.send(acknowledge(topic, 3, {0: [(0, 0, [RENEW])]}, renew=True))
    assert (errors(renewed), renewed.acquisition_lock_timeout_ms) == ({0: 0}, 30000)
    clock.advance(10)  # 30 s after the fetch: offset 1's lock expires, offset 0's was renewed
    assert states(cluster) == {0: ("ACQUIRED", 1), 1: ("AVAILABLE", 1)}
    clock.advance(20)
    assert states(cluster) == {0: ("AVAILABLE", 1), 1: ("AVAILABLE", 1)}


async def test_a_renewing_share_fetch_fetches_nothing_and_must_ask_for_nothing(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a"])
    await wire.send(fetch(topic, 0))
    cluster.produce("t", 0, [b"b"])
    asking = await wire.send(fetch(topic, 1, acks={0: [(0, 0, [RENEW])]}, renew=True))
    assert asking.error_code == Error.INVALID_REQUEST
    quiet = fetch(topic, 1, acks={0: [(0, 0, [RENEW])]}, renew=True, max_records=0, max_bytes=0)
    answer = await wire.send(quiet)
    assert (answer.error_code, errors(answer, "acknowledge_error_code"), acquired(answer)) == (
        0,
        {0: 0},
        {},
    )
    assert states(cluster) == {0: ("ACQUIRED", 1)}


async def test_offsets_that_are_no_records_are_acquired_and_acknowledged_as_gaps(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a"])
    partition = cluster.state.partition("t", 0)
    assert partition is not None
    partition.log.append_marker(  # a transaction's COMMIT marker: a control record at 1
        7, 0, committed=True, coordinator_epoch=0, leader_epoch=partition.leader_epoch, timestamp=0
    )
    cluster.produce("t", 0, [b"b"])
    first = await wire.send(fetch(topic, 0))
    assert acquired(first) == {0: [(0, 2, 1)]}
    answer = await wire.send(acknowledge(topic, 1, {0: [(0, 2, [ACCEPT, GAP, ACCEPT])]}))
    assert errors(answer) == {0: 0}
    share = cluster.share_partition(GROUP, "t", 0)
    assert share is not None
    assert share.start_offset == 3


async def test_two_members_share_a_partition_and_never_hold_one_record_together(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a", b"b"])
    cluster.produce("t", 0, [b"c", b"d"])
    async with Wire(cluster, 0) as other:
        mine = await wire.send(fetch(topic, 0, max_records=2))
        theirs = await other.send(fetch(topic, 0, member="member-2", max_records=2))
        assert (acquired(mine), acquired(theirs)) == ({0: [(0, 1, 1)]}, {0: [(2, 3, 1)]})
        none_left = await other.send(fetch(topic, 1, member="member-2"))
        assert acquired(none_left) == {}
        stolen = await other.send(acknowledge(topic, 2, {0: [(0, 1, [ACCEPT])]}, member="member-2"))
        assert errors(stolen) == {0: Error.INVALID_RECORD_STATE}
        released = await wire.send(acknowledge(topic, 1, {0: [(0, 1, [RELEASE])]}))
        assert errors(released) == {0: 0}
        taken = await other.send(fetch(topic, 3, member="member-2"))
        assert acquired(taken) == {0: [(0, 1, 2)]}
    share = cluster.share_partition(GROUP, "t", 0)
    assert share is not None
    assert {o: r.member_id for o, r in share.records.items()} == dict.fromkeys(range(4), "member-2")


async def test_a_share_group_starts_at_the_latest_offset_unless_told_otherwise(
    cluster: FakeCluster, wire: Wire
) -> None:
    cluster.set_group_config(GROUP, "share.auto.offset.reset", None)
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"old", b"older"])
    assert acquired(await wire.send(fetch(topic, 0))) == {}
    cluster.produce("t", 0, [b"new"])
    assert acquired(await wire.send(fetch(topic, 1))) == {0: [(2, 2, 1)]}
