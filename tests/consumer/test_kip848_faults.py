"""The KIP-848 consumer group protocol on the fake cluster's coordinator: what a real broker
rarely shows on demand (fencing, fatal errors, a moving coordinator, stale epochs), scripted by
the fake's hooks, and what goes on the wire (member id and epoch, leave epochs)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from kafkawire.consumer import (
    CommitFailedError,
    Consumer,
    TopicPartition,
    UnsupportedGroupProtocolError,
)
from kafkawire.consumer.group.member_state import MemberState
from kafkawire.errors import (
    GroupAuthorizationFailedError,
    GroupMaxSizeReachedError,
    InvalidRequestError,
    KafkawireError,
    UnreleasedInstanceIdError,
    UnsupportedAssignorError,
)
from kafkawire.messages.consumer_group_heartbeat import v1 as heartbeat_v1
from kafkawire.testing.fake import FakeCluster, HookContext
from kafkawire.testing.fake.faults import partition_answer
from tests.fake.wire import Wire

from .helpers import Recorder

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
WAIT = 10  # the bound on every wait: a test must fail, not hang
HEARTBEAT = "ConsumerGroupHeartbeat"


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    """One broker, topic ``t`` of two partitions, heartbeats every 50 ms."""
    async with FakeCluster(1, consumer_group_heartbeat_interval_ms=50) as cluster:
        cluster.create_topic("t", 2)
        yield cluster


def member(cluster: FakeCluster, listener: Recorder | None = None, **options: Any) -> Consumer:
    consumer = Consumer(
        bootstrap_servers=cluster.bootstrap,
        group_id="g",
        group_protocol="consumer",
        retry_backoff_ms=10,
        **options,
    )
    consumer.subscribe(["t"], listener)
    return consumer


def heartbeats(cluster: FakeCluster) -> list[Any]:
    return [r.request for r in cluster.requests.of(HEARTBEAT)]


def acknowledged(cluster: FakeCluster) -> bool:
    """Whether a heartbeat before the last one reported owned partitions."""
    return any(r.topic_partitions for r in heartbeats(cluster)[:-1])


async def next_heartbeat(
    cluster: FakeCluster, wanted: Callable[[Any], bool] = lambda r: True, *, after: int = 0
) -> Any:
    """The first heartbeat past the first ``after`` sent that ``wanted`` accepts (waiting for
    it if need be)."""
    checked = after
    while True:
        sent = await cluster.requests.wait_for(HEARTBEAT, checked + 1, timeout=WAIT)
        found = next((r.request for r in sent[checked:] if wanted(r.request)), None)
        if found is not None:
            return found
        checked = len(sent)


def position(cluster: FakeCluster, request: Any) -> int:
    """Where ``request`` is in everything the cluster received."""
    return next(i for i, r in enumerate(cluster.requests) if r.request is request)


def refusing(
    error_code: int, when: Callable[[Any], bool] = lambda request: True, **values: Any
) -> Callable[[Any, HookContext], Any]:
    """A heartbeat hook: the heartbeats ``when`` accepts are answered ``error_code``; the
    others go to the coordinator."""

    def refuse(request: Any, ctx: HookContext) -> Any:
        if not when(request):
            return None
        return ctx.response(error_code=error_code, **values)

    return refuse


async def test_the_join_carries_everything_and_later_heartbeats_only_changes(
    cluster: FakeCluster,
) -> None:
    heard = Recorder()
    async with member(
        cluster, heard, group_instance_id="i-1", max_poll_interval_ms=45_000
    ) as consumer:
        await heard.until(1, consumer)
        ack = await next_heartbeat(cluster, lambda r: bool(r.topic_partitions))
        acked = len(heartbeats(cluster))
        await cluster.requests.wait_for(HEARTBEAT, acked + 1, timeout=WAIT)
    sent = heartbeats(cluster)
    join, later, leave = sent[0], sent[acked], sent[-1]
    assert heard.events[0] == ("assigned", {T0, T1})
    assert (len(join.member_id), join.member_epoch) == (22, 0)  # a Kafka Uuid string; joining
    assert (join.rebalance_timeout_ms, join.subscribed_topic_names) == (45_000, ("t",))
    assert (join.subscribed_topic_regex, join.topic_partitions) == ("", ())
    assert join.instance_id == "i-1"
    # The acknowledgement: the owned partitions, by topic id; nothing else changed.
    assert (ack.member_id, ack.member_epoch) == (join.member_id, 1)
    assert [(tp.topic_id, tp.partitions) for tp in ack.topic_partitions] == [
        (cluster.topic_id("t"), (0, 1))
    ]
    assert (ack.rebalance_timeout_ms, ack.subscribed_topic_names) == (-1, None)
    assert (later.topic_partitions, later.subscribed_topic_names, later.instance_id) == (
        None,
        None,
        "i-1",
    )
    # A static member leaves with epoch -2: the broker keeps its assignment for its return.
    assert (leave.member_id, leave.member_epoch, leave.instance_id) == (join.member_id, -2, "i-1")


@pytest.mark.parametrize("code", [110, 25], ids=["FENCED_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID"])
async def test_a_fenced_member_loses_its_partitions_and_joins_again(
    cluster: FakeCluster, code: int
) -> None:
    fenced: list[Any] = []

    def fence_once(request: Any) -> bool:
        if request.member_epoch > 0 and acknowledged(cluster) and not fenced:
            fenced.append(request)
        return bool(fenced) and fenced[0] is request

    cluster.control(refusing(code, fence_once, member_epoch=-1), api_key=HEARTBEAT, keep=True)
    heard = Recorder()
    async with member(cluster, heard) as consumer:
        await heard.until(3, consumer)
        assert consumer.assignment() == {T0, T1}
        assert heard.events == [("assigned", {T0, T1}), ("lost", {T0, T1}), ("assigned", {T0, T1})]
        after_fence = heartbeats(cluster).index(fenced[0]) + 1
        rejoin = await next_heartbeat(cluster, lambda r: r.member_epoch == 0, after=after_fence)
    first = heartbeats(cluster)[0]
    assert rejoin.member_id == first.member_id  # the same member id, epoch 0, every field
    assert (rejoin.rebalance_timeout_ms, rejoin.subscribed_topic_names) == (300_000, ("t",))
    assert rejoin.topic_partitions == ()  # it owns nothing any more
    # Lost partitions are not committed: no commit went from the fence to the rejoin (the new
    # assignment's may go, on close).
    commits = cluster.requests.of("OffsetCommit")
    assert [c for c in commits if position(cluster, c.request) < position(cluster, rejoin)] == []


@pytest.mark.parametrize(
    ("code", "error"),
    [
        (30, GroupAuthorizationFailedError),
        (111, UnreleasedInstanceIdError),
        (81, GroupMaxSizeReachedError),
        (42, InvalidRequestError),
        (112, UnsupportedAssignorError),
    ],
)
async def test_a_fatal_error_reaches_every_poll_and_heartbeats_stop(
    cluster: FakeCluster, code: int, error: type[KafkawireError]
) -> None:
    cluster.control(
        refusing(code, lambda request: acknowledged(cluster), error_message="refused by the test"),
        api_key=HEARTBEAT,
        keep=True,
    )
    heard = Recorder()
    async with member(cluster, heard) as consumer:
        with pytest.raises(error, match="refused by the test"):
            await asyncio.wait_for(consumer.getmany(timeout_ms=60_000), WAIT)
        with pytest.raises(error):
            await consumer.getmany()
        with pytest.raises(error):
            await asyncio.wait_for(anext(aiter(consumer)), WAIT)
        assert consumer.assignment() == set()
        sent = len(heartbeats(cluster))
        await asyncio.sleep(0.3)  # six heartbeat intervals of the fake: none may go
        assert len(heartbeats(cluster)) == sent
    assert heard.events == [("assigned", {T0, T1}), ("lost", {T0, T1})]
    assert len(heartbeats(cluster)) == sent  # a member in error does not leave either


async def test_unsupported_version_is_the_clear_error(cluster: FakeCluster) -> None:
    cluster.control(refusing(35), api_key=HEARTBEAT, keep=True)
    async with member(cluster) as consumer:
        with pytest.raises(UnsupportedGroupProtocolError, match="group_protocol='classic'"):
            await asyncio.wait_for(consumer.getmany(timeout_ms=60_000), WAIT)


async def test_a_moved_coordinator_is_found_again() -> None:
    async with FakeCluster(2, consumer_group_heartbeat_interval_ms=50) as cluster:
        cluster.create_topic("t", 2)
        first = cluster.coordinator("g")

        def move(request: Any, ctx: HookContext) -> None:
            ctx.remove()
            cluster.move_coordinator("g", 1 - ctx.node_id)  # broker ctx.node_id says so

        cluster.control(move, api_key=HEARTBEAT)
        heard = Recorder()
        async with member(cluster, heard) as consumer:
            await heard.until(1, consumer)
            assert consumer.assignment() == {T0, T1}
        finds = cluster.requests.of("FindCoordinator")
        sent = cluster.requests.of(HEARTBEAT)
    assert len(finds) >= 2
    assert [r.node_id for r in sent[:2]] == [first, 1 - first]
    retried = sent[1].request  # after NOT_COORDINATOR: every field again, same member id
    assert (retried.member_epoch, retried.member_id) == (0, sent[0].request.member_id)


async def test_a_commit_refused_as_stale_goes_again_with_the_next_epoch(
    cluster: FakeCluster,
) -> None:
    def stale(request: Any, ctx: HookContext) -> Any:
        cluster.add_partitions("t", 3)  # the group's epoch moves on: the next heartbeat says so
        return partition_answer(request, ctx, 113)  # STALE_MEMBER_EPOCH

    cluster.control(stale, api_key="OffsetCommit")
    heard = Recorder()
    async with member(cluster, heard, enable_auto_commit=False) as consumer:
        await heard.until(1, consumer)
        await asyncio.wait_for(consumer.commit({T0: 5}), WAIT)
    commits = [r.request for r in cluster.requests.of("OffsetCommit")]
    epochs = [c.generation_id_or_member_epoch for c in commits]
    assert (epochs[0], epochs[-1]) == (1, 2)
    assert {c.member_id for c in commits} == {heartbeats(cluster)[0].member_id}


async def test_commits_are_read_back_as_the_member(cluster: FakeCluster) -> None:
    heard = Recorder()
    async with member(cluster, heard) as consumer:
        await heard.until(1, consumer)
    group = cluster.requests.of("OffsetFetch")[0].request.groups[0]  # v9: member id and epoch
    assert (group.member_id, group.member_epoch) == (heartbeats(cluster)[0].member_id, 1)


async def test_a_member_that_stops_polling_leaves_and_joins_at_its_next_poll(
    cluster: FakeCluster,
) -> None:
    heard = Recorder()
    async with member(cluster, heard, max_poll_interval_ms=300) as consumer:
        while not heard.events:  # polling keeps it in the group
            await asyncio.wait_for(consumer.getmany(timeout_ms=50), WAIT)
        leave = await next_heartbeat(cluster, lambda r: r.member_epoch < 0)  # as polls stop
        assert leave.member_epoch == -1
        assert len(heard.events) == 1  # nothing changes behind the application's back
        with pytest.raises(CommitFailedError, match="not a member"):
            await consumer.commit()
        sent = len(heartbeats(cluster))
        while len(heard.events) < 2:  # a poll hears the partitions were lost, and joins again
            await asyncio.wait_for(consumer.getmany(timeout_ms=50), WAIT)
        assert heard.events[1] == ("lost", {T0, T1})
        await heard.until(3, consumer)
        rejoin = heartbeats(cluster)[sent]
    lost_and_back = [("assigned", {T0, T1}), ("lost", {T0, T1}), ("assigned", {T0, T1})]
    assert heard.events[:3] == lost_and_back
    assert (rejoin.member_epoch, rejoin.member_id) == (0, leave.member_id)


async def test_a_new_target_changes_the_assignment_only_in_the_next_poll(
    cluster: FakeCluster,
) -> None:
    """A second member joins and the coordinator takes a partition away while the application
    processes a batch: nothing changes behind its back (it still commits that partition as the
    member), and its next poll revokes it and acknowledges."""
    told: list[tuple[int, Any]] = []  # heartbeats sent by then, and the answer naming it

    async def watch(request: Any, ctx: HookContext) -> Any:
        answer = await ctx.handle()
        if answer.assignment is not None and told == [] and _count(answer.assignment) == 1:
            told.append((len(heartbeats(cluster)), answer.assignment))
        return answer

    heard = Recorder()
    async with member(cluster, heard, enable_auto_commit=False) as consumer:
        await heard.until(1, consumer)
        # The second member joins once the first poll has ended: a poll that is still running
        # when the new target comes may apply it (as Java's poll loop does), which is not what
        # this test is about.
        cluster.control(watch, api_key=HEARTBEAT, keep=True)
        async with Wire(cluster, cluster.coordinator("g")) as wire:
            joined = await wire.send(
                heartbeat_v1.ConsumerGroupHeartbeatRequest(
                    group_id="g",
                    member_id="the-other-member-000000",
                    rebalance_timeout_ms=60_000,
                    subscribed_topic_names=("t",),
                    topic_partitions=(),
                )
            )
        assert joined.error_code == 0
        await next_heartbeat(cluster, lambda r: bool(told))
        await cluster.requests.wait_for(HEARTBEAT, told[0][0] + 1, timeout=WAIT)  # it heard
        assert (consumer.assignment(), len(heard.events)) == ({T0, T1}, 1)
        (kept,) = [
            TopicPartition("t", p) for t in told[0][1].topic_partitions for p in t.partitions
        ]
        (taken,) = {T0, T1} - {kept}
        await asyncio.wait_for(consumer.commit({taken: 5}), WAIT)
        last = cluster.requests.of("OffsetCommit")[-1].request
        assert [p.partition_index for t in last.topics for p in t.partitions] == [taken.partition]
        await heard.until(2, consumer)
        assert (heard.events[1], consumer.assignment()) == (("revoked", {taken}), {kept})
        ack = await next_heartbeat(cluster, lambda r: bool(r.topic_partitions), after=told[0][0])
    assert [tp.partitions for tp in ack.topic_partitions] == [(kept.partition,)]


def _count(assignment: Any) -> int:
    return sum(len(t.partitions) for t in assignment.topic_partitions)


async def test_close_commits_revokes_then_leaves(cluster: FakeCluster) -> None:
    heard = Recorder()
    async with member(cluster, heard) as consumer:
        await heard.until(1, consumer)
        consumer.seek(T0, 7)
    leave = heartbeats(cluster)[-1]
    assert heard.events == [("assigned", {T0, T1}), ("revoked", {T0, T1})]
    last = cluster.requests.of("OffsetCommit")[-1].request
    committed = {
        (t.name, p.partition_index): p.committed_offset for t in last.topics for p in t.partitions
    }
    assert committed[("t", 0)] == 7
    assert (leave.member_epoch, leave.instance_id) == (-1, None)


async def test_unsubscribe_leaves_and_a_new_subscription_joins_again(
    cluster: FakeCluster,
) -> None:
    heard = Recorder()
    async with member(cluster, heard) as consumer:
        await heard.until(1, consumer)
        consumer.unsubscribe()
        leave = await next_heartbeat(cluster, lambda r: r.member_epoch < 0)
        assert (leave.member_epoch, consumer.assignment()) == (-1, set())
        joins = len([r for r in heartbeats(cluster) if r.member_epoch == 0])
        consumer.subscribe(["t"], heard)
        await heard.until(2, consumer)
        assert consumer.assignment() == {T0, T1}
    rejoin = [r for r in heartbeats(cluster) if r.member_epoch == 0][joins]
    assert (rejoin.member_id, rejoin.subscribed_topic_names) == (leave.member_id, ("t",))


async def test_closing_before_the_poll_that_hears_the_loss_tells_the_listener(
    cluster: FakeCluster,
) -> None:
    """Fenced, the member waits for the next poll to tell the listener its partitions are
    lost; a close that comes first tells it instead (as the classic protocol's does)."""
    fenced = asyncio.Event()
    cluster.control(
        refusing(110, lambda request: fenced.is_set()), api_key=HEARTBEAT, keep=True
    )  # FENCED_MEMBER_EPOCH
    heard = Recorder()
    consumer = member(cluster, heard)
    await consumer.start()
    await heard.until(1, consumer)
    fenced.set()
    await next_heartbeat(cluster, after=len(heartbeats(cluster)))
    await asyncio.wait_for(until_state(consumer, MemberState.FENCED), WAIT)
    await asyncio.wait_for(consumer.close(), WAIT)
    assert heard.events == [("assigned", {T0, T1}), ("lost", {T0, T1})]


async def test_a_member_still_joining_cannot_commit(cluster: FakeCluster) -> None:
    """At epoch 0 the member has no epoch for its commits to name (one meaning of being in
    the group, for both protocols): a commit is refused, and none goes to the coordinator."""

    def joining(request: Any, ctx: HookContext) -> Any:
        return ctx.response(member_id=request.member_id, member_epoch=0, heartbeat_interval_ms=50)

    cluster.control(joining, api_key=HEARTBEAT, keep=True)
    async with member(cluster) as consumer:
        await next_heartbeat(cluster)
        with pytest.raises(CommitFailedError, match="not a member of the group now"):
            await consumer.commit({T0: 5})
    assert cluster.requests.of("OffsetCommit") == []


async def until_state(consumer: Consumer, state: MemberState) -> None:
    while consumer._group is None or consumer._group.state is not state:
        await asyncio.sleep(0.01)
