"""Share sessions on the wire: epochs and their errors, acknowledgements at epoch 0 refused,
closing a session (by its final epoch or its connection) releasing what its member holds, and
the session limit."""

from __future__ import annotations

from kafkawire.testing.fake import Error, FakeCluster, ManualClock
from tests.fake.wire import Wire

from .share import ACCEPT, GROUP, acknowledge, acquired, errors, fetch, states


async def test_epochs_must_follow_the_session(cluster: FakeCluster, wire: Wire) -> None:
    topic = cluster.topic_id("t")
    none_yet = await wire.send(fetch(topic, 1))
    assert none_yet.error_code == Error.SHARE_SESSION_NOT_FOUND
    assert (await wire.send(fetch(topic, 0))).error_code == 0
    skipped = await wire.send(fetch(topic, 2))
    assert skipped.error_code == Error.INVALID_SHARE_SESSION_EPOCH
    assert (await wire.send(fetch(topic, 1))).error_code == 0
    acked = await wire.send(acknowledge(topic, 2, {0: []}))
    assert acked.error_code == 0
    assert (await wire.send(fetch(topic, 3))).error_code == 0
    opening = await wire.send(acknowledge(topic, 0, {0: []}))
    assert opening.error_code == Error.INVALID_SHARE_SESSION_EPOCH


async def test_acknowledgements_on_an_opening_fetch_are_refused(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a"])
    await wire.send(fetch(topic, 0))
    # KAFKA-18198 / KAFKA-19485: the client reopened its session and piggybacked its
    # acknowledgements; the broker refuses the whole request and keeps the records acquired.
    reopening = await wire.send(fetch(topic, 0, acks={0: [(0, 0, [ACCEPT])]}))
    assert (reopening.error_code, reopening.responses) == (Error.INVALID_REQUEST, ())
    assert states(cluster) == {0: ("ACQUIRED", 1)}


async def test_the_final_epoch_closes_the_session_and_releases_the_members_records(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a", b"b"])
    await wire.send(fetch(topic, 0))
    closing = await wire.send(fetch(topic, -1, acks={0: [(0, 0, [ACCEPT])]}))
    assert (closing.error_code, errors(closing, "acknowledge_error_code"), acquired(closing)) == (
        0,
        {0: 0},
        {},
    )
    assert states(cluster) == {1: ("AVAILABLE", 1)}
    gone = await wire.send(fetch(topic, 1))
    assert gone.error_code == Error.SHARE_SESSION_NOT_FOUND
    again = await wire.send(acknowledge(topic, -1, {0: []}))
    assert again.error_code == Error.SHARE_SESSION_NOT_FOUND


async def test_a_closed_connection_drops_the_session_it_opened_and_no_other(
    cluster: FakeCluster, wire: Wire
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a"])
    cluster.produce("t", 0, [b"b"])
    async with Wire(cluster, 0) as other:
        await other.send(fetch(topic, 0, member="member-2", max_records=1))
        await wire.send(fetch(topic, 0, max_records=1))
    # member-2's connection closed: its session and its record went; member-1's stay.
    await wire.send(acknowledge(topic, 1, {0: []}))  # any request, once the close is seen
    assert states(cluster) == {0: ("AVAILABLE", 1), 1: ("ACQUIRED", 1)}
    async with Wire(cluster, 0) as later:
        lost = await later.send(fetch(topic, 1, member="member-2"))
        assert lost.error_code == Error.SHARE_SESSION_NOT_FOUND
        mine = await later.send(fetch(topic, 2))  # member-1's session, on another connection
        assert (mine.error_code, acquired(mine)) == (0, {0: [(0, 0, 2)]})


async def test_the_session_limit_is_share_session_limit_reached(clock: ManualClock) -> None:
    async with FakeCluster(clock=clock, share_group_max_share_sessions=1) as cluster:
        cluster.create_topic("t")
        cluster.move_leader("t", 0, 0)
        topic = cluster.topic_id("t")
        async with Wire(cluster, 0) as wire:
            assert (await wire.send(fetch(topic, 0))).error_code == 0
            full = await wire.send(fetch(topic, 0, member="member-2"))
            assert full.error_code == Error.SHARE_SESSION_LIMIT_REACHED
            assert (await wire.send(fetch(topic, 0))).error_code == 0  # its own: replaced


async def test_an_incremental_answer_names_only_partitions_with_news(clock: ManualClock) -> None:
    async with FakeCluster(clock=clock) as cluster:
        cluster.create_topic("t", partitions=2)
        for p in (0, 1):
            cluster.move_leader("t", p, 0)
        cluster.set_group_config(GROUP, "share.auto.offset.reset", "earliest")
        topic = cluster.topic_id("t")
        async with Wire(cluster, 0) as wire:
            full = await wire.send(fetch(topic, 0, [0, 1]))
            assert errors(full) == {0: 0, 1: 0}
            assert errors(await wire.send(fetch(topic, 1, []))) == {}
            cluster.produce("t", 1, [b"a"])
            news = await wire.send(fetch(topic, 2, []))
            assert (errors(news), acquired(news)) == ({1: 0}, {1: [(0, 0, 1)]})
            forgot = await wire.send(fetch(topic, 3, [], forgotten=[0, 1]))
            cluster.produce("t", 0, [b"b"])
            assert errors(forgot) == {}
            assert errors(await wire.send(fetch(topic, 4, []))) == {}
