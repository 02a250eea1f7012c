"""The KIP-848 consumer group protocol against a fake coordinator: what a real broker rarely
shows on demand (fencing, fatal errors, a moving coordinator, stale epochs) and what goes on
the wire (member id and epoch, leave epochs)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire.consumer import CommitFailedError, Consumer, UnsupportedGroupProtocolError
from kafkawire.consumer.group.member_state import MemberState
from kafkawire.errors import (
    GroupAuthorizationFailedError,
    GroupMaxSizeReachedError,
    InvalidRequestError,
    KafkawireError,
    UnreleasedInstanceIdError,
    UnsupportedAssignorError,
)

from .helpers import Recorder
from .kip848_fake import T0, T1, TOPIC_ID, FakeCoordinator, assignment

WAIT = 10  # the bound on every wait: a test must fail, not hang


def member(fake: FakeCoordinator, listener: Recorder | None = None, **options: Any) -> Consumer:
    consumer = Consumer(
        bootstrap_servers=fake.bootstrap,
        group_id="g",
        group_protocol="consumer",
        retry_backoff_ms=10,
        **options,
    )
    consumer.subscribe(["t"], listener)
    return consumer


def steady(*partitions: int, epoch: int = 1) -> Any:
    """A coordinator that assigns ``partitions`` at once and keeps the member at ``epoch``."""

    def answer(request: Any) -> dict[str, Any]:
        fields: dict[str, Any] = {"member_id": request.member_id, "member_epoch": epoch}
        if request.member_epoch == 0:
            fields |= assignment(*partitions)
        return fields

    return answer


async def test_the_join_carries_everything_and_later_heartbeats_only_changes() -> None:
    async with FakeCoordinator(steady(0, 1)) as fake:
        heard = Recorder()
        async with member(
            fake, heard, group_instance_id="i-1", max_poll_interval_ms=45_000
        ) as consumer:
            await heard.until(1, consumer)
            ack = await fake.until_heartbeat(lambda r: bool(r.topic_partitions))
            acked = len(fake.heartbeats)
            await fake.until_heartbeat(lambda r: len(fake.heartbeats) > acked)
        join, later, leave = fake.heartbeats[0], fake.heartbeats[acked], fake.heartbeats[-1]
    assert heard.events[0] == ("assigned", {T0, T1})
    assert (len(join.member_id), join.member_epoch) == (22, 0)  # a Kafka Uuid string; joining
    assert (join.rebalance_timeout_ms, join.subscribed_topic_names) == (45_000, ("t",))
    assert (join.subscribed_topic_regex, join.topic_partitions) == ("", ())
    assert join.instance_id == "i-1"
    # The acknowledgement: the owned partitions, by topic id; nothing else changed.
    assert (ack.member_id, ack.member_epoch) == (join.member_id, 1)
    assert [(tp.topic_id, tp.partitions) for tp in ack.topic_partitions] == [(TOPIC_ID, (0, 1))]
    assert (ack.rebalance_timeout_ms, ack.subscribed_topic_names) == (-1, None)
    assert (later.topic_partitions, later.subscribed_topic_names, later.instance_id) == (
        None,
        None,
        "i-1",
    )
    # A static member leaves with epoch -2: the broker keeps its assignment for its return.
    assert (leave.member_id, leave.member_epoch, leave.instance_id) == (join.member_id, -2, "i-1")


@pytest.mark.parametrize("code", [110, 25], ids=["FENCED_MEMBER_EPOCH", "UNKNOWN_MEMBER_ID"])
async def test_a_fenced_member_loses_its_partitions_and_joins_again(code: int) -> None:
    def answer(request: Any) -> dict[str, Any]:
        if request.member_epoch == 0:  # a join (the first, and the one after the fence)
            epoch = 1 if not fenced else 5
            return {"member_id": request.member_id, "member_epoch": epoch} | assignment(0, 1)
        if request.member_epoch == 1 and fake.acknowledged():
            fenced.append(request)
            return {"error_code": code, "member_epoch": -1}
        return {"member_id": request.member_id, "member_epoch": request.member_epoch}

    fenced: list[Any] = []
    heard = Recorder()
    async with FakeCoordinator(answer) as fake, member(fake, heard) as consumer:
        await heard.until(3, consumer)
        assert consumer.assignment() == {T0, T1}
        assert heard.events == [("assigned", {T0, T1}), ("lost", {T0, T1}), ("assigned", {T0, T1})]
        rejoin = next(r for r in fake.heartbeats[3:] if r.member_epoch == 0)
    first = fake.heartbeats[0]
    assert rejoin.member_id == first.member_id  # the same member id, epoch 0, every field
    assert (rejoin.rebalance_timeout_ms, rejoin.subscribed_topic_names) == (300_000, ("t",))
    assert rejoin.topic_partitions == ()  # it owns nothing any more
    # Lost partitions are not committed; the new assignment's may be (on close), at epoch 5.
    assert [c for c in fake.commits if c.generation_id_or_member_epoch != 5] == []


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
    code: int, error: type[KafkawireError]
) -> None:
    def answer(request: Any) -> dict[str, Any]:
        if not fake.acknowledged():
            return steady(0, 1)(request)
        return {"error_code": code, "error_message": "refused by the test"}

    heard = Recorder()
    async with FakeCoordinator(answer) as fake, member(fake, heard) as consumer:
        with pytest.raises(error, match="refused by the test"):
            await asyncio.wait_for(consumer.getmany(timeout_ms=60_000), WAIT)
        with pytest.raises(error):
            await consumer.getmany()
        with pytest.raises(error):
            await asyncio.wait_for(anext(aiter(consumer)), WAIT)
        assert consumer.assignment() == set()
        sent = len(fake.heartbeats)
        await asyncio.sleep(0.3)  # six heartbeat intervals of the fake: none may go
        assert len(fake.heartbeats) == sent
    assert heard.events == [("assigned", {T0, T1}), ("lost", {T0, T1})]
    assert len(fake.heartbeats) == sent  # a member in error does not leave either


async def test_unsupported_version_is_the_clear_error() -> None:
    async with (
        FakeCoordinator(lambda request: {"error_code": 35}) as fake,
        member(fake) as consumer,
    ):
        with pytest.raises(UnsupportedGroupProtocolError, match="group_protocol='classic'"):
            await asyncio.wait_for(consumer.getmany(timeout_ms=60_000), WAIT)


async def test_a_moved_coordinator_is_found_again() -> None:
    def answer(request: Any) -> dict[str, Any]:
        if fake.coordinator == 1:
            fake.coordinator = 2  # the group moves; broker 1 says so
            return {"error_code": 16}  # NOT_COORDINATOR
        return steady(0, 1)(request)

    heard = Recorder()
    async with FakeCoordinator(answer, brokers=2) as fake, member(fake, heard) as consumer:
        await heard.until(1, consumer)
        assert consumer.assignment() == {T0, T1}
    assert fake.finds >= 2
    retried = fake.heartbeats[1]  # after the error: every field again, same member id
    assert (retried.member_epoch, retried.member_id) == (0, fake.heartbeats[0].member_id)


async def test_a_commit_refused_as_stale_goes_again_with_the_next_epoch() -> None:
    def answer(request: Any) -> dict[str, Any]:
        return steady(0, 1, epoch=2 if fake.commits else 1)(request)  # moves on at a commit

    def commit_error(request: Any) -> int:
        return 0 if request.generation_id_or_member_epoch == 2 else 113  # STALE_MEMBER_EPOCH

    heard = Recorder()
    async with (
        FakeCoordinator(answer, commit_error=commit_error) as fake,
        member(fake, heard, enable_auto_commit=False) as consumer,
    ):
        await heard.until(1, consumer)
        await asyncio.wait_for(consumer.commit({T0: 5}), WAIT)
    epochs = [c.generation_id_or_member_epoch for c in fake.commits]
    assert (epochs[0], epochs[-1]) == (1, 2)
    assert {c.member_id for c in fake.commits} == {fake.heartbeats[0].member_id}


async def test_commits_are_read_back_as_the_member() -> None:
    heard = Recorder()
    async with FakeCoordinator(steady(0, 1, epoch=3)) as fake, member(fake, heard) as consumer:
        await heard.until(1, consumer)
    group = fake.fetches[0].groups[0]  # OffsetFetch v9: the member's id and epoch
    assert (group.member_id, group.member_epoch) == (fake.heartbeats[0].member_id, 3)


async def test_a_member_that_stops_polling_leaves_and_joins_at_its_next_poll() -> None:
    heard = Recorder()
    async with (
        FakeCoordinator(steady(0, 1)) as fake,
        member(fake, heard, max_poll_interval_ms=300) as consumer,
    ):
        while not heard.events:  # polling keeps it in the group
            await asyncio.wait_for(consumer.getmany(timeout_ms=50), WAIT)
        leave = await fake.until_heartbeat(lambda r: r.member_epoch < 0)  # as the polls stop
        assert leave.member_epoch == -1
        assert len(heard.events) == 1  # nothing changes behind the application's back
        with pytest.raises(CommitFailedError, match="not a member"):
            await consumer.commit()
        sent = len(fake.heartbeats)
        while len(heard.events) < 2:  # a poll hears the partitions were lost, and joins again
            await asyncio.wait_for(consumer.getmany(timeout_ms=50), WAIT)
        assert heard.events[1] == ("lost", {T0, T1})
        await heard.until(3, consumer)
        rejoin = fake.heartbeats[sent]
    lost_and_back = [("assigned", {T0, T1}), ("lost", {T0, T1}), ("assigned", {T0, T1})]
    assert heard.events[:3] == lost_and_back
    assert (rejoin.member_epoch, rejoin.member_id) == (0, leave.member_id)


async def test_a_new_target_changes_the_assignment_only_in_the_next_poll() -> None:
    """The broker takes t-1 away while the application processes a batch: nothing changes
    behind its back (it still commits t-1 as the member), and its next poll revokes t-1 and
    acknowledges."""

    def answer(request: Any) -> dict[str, Any]:
        if request.member_epoch == 0:
            return {"member_id": request.member_id, "member_epoch": 1} | assignment(0, 1)
        if fake.acknowledged() and new_target.is_set():
            return {"member_id": request.member_id, "member_epoch": 2} | assignment(0)
        return {"member_id": request.member_id, "member_epoch": 1}

    # The new target comes once the first poll has ended: a poll that is still running when
    # it comes may apply it (as Java's poll loop does), which is not what this test is about.
    new_target = asyncio.Event()
    heard = Recorder()
    async with (
        FakeCoordinator(answer) as fake,
        member(fake, heard, enable_auto_commit=False) as consumer,
    ):
        await heard.until(1, consumer)
        new_target.set()
        await fake.until_heartbeat(lambda r: r.member_epoch == 2)  # it heard of the new target
        assert (consumer.assignment(), len(heard.events)) == ({T0, T1}, 1)
        await asyncio.wait_for(consumer.commit({T1: 5}), WAIT)
        assert [p.partition_index for t in fake.commits[-1].topics for p in t.partitions] == [1]
        await heard.until(2, consumer)
        assert (heard.events[1], consumer.assignment()) == (("revoked", {T1}), {T0})
        ack = await fake.until_heartbeat(lambda r: r.member_epoch == 2 and bool(r.topic_partitions))
    assert [tp.partitions for tp in ack.topic_partitions] == [(0,)]


async def test_close_commits_revokes_then_leaves() -> None:
    heard = Recorder()
    async with FakeCoordinator(steady(0, 1)) as fake:
        async with member(fake, heard) as consumer:
            await heard.until(1, consumer)
            consumer.seek(T0, 7)
        leave = fake.heartbeats[-1]
    assert heard.events == [("assigned", {T0, T1}), ("revoked", {T0, T1})]
    committed = {
        (t.name, p.partition_index): p.committed_offset
        for t in fake.commits[-1].topics
        for p in t.partitions
    }
    assert committed[("t", 0)] == 7
    assert (leave.member_epoch, leave.instance_id) == (-1, None)


async def test_unsubscribe_leaves_and_a_new_subscription_joins_again() -> None:
    heard = Recorder()
    async with FakeCoordinator(steady(0, 1)) as fake, member(fake, heard) as consumer:
        await heard.until(1, consumer)
        consumer.unsubscribe()
        leave = await fake.until_heartbeat(lambda r: r.member_epoch < 0)
        assert (leave.member_epoch, consumer.assignment()) == (-1, set())
        joins = len([r for r in fake.heartbeats if r.member_epoch == 0])
        consumer.subscribe(["t"], heard)
        await heard.until(2, consumer)
        assert consumer.assignment() == {T0, T1}
    rejoin = [r for r in fake.heartbeats if r.member_epoch == 0][joins]
    assert (rejoin.member_id, rejoin.subscribed_topic_names) == (leave.member_id, ("t",))


async def test_closing_before_the_poll_that_hears_the_loss_tells_the_listener() -> None:
    """Fenced, the member waits for the next poll to tell the listener its partitions are
    lost; a close that comes first tells it instead (as the classic protocol's does)."""
    fenced = asyncio.Event()

    def answer(request: Any) -> dict[str, Any]:
        if fenced.is_set():
            return {"error_code": 110}  # FENCED_MEMBER_EPOCH
        return steady(0, 1)(request)

    heard = Recorder()
    async with FakeCoordinator(answer) as fake:
        consumer = member(fake, heard)
        await consumer.start()
        await heard.until(1, consumer)
        fenced.set()
        await fake.until_heartbeat(lambda r: fenced.is_set(), timeout=WAIT)
        await asyncio.wait_for(until_state(consumer, MemberState.FENCED), WAIT)
        await asyncio.wait_for(consumer.close(), WAIT)
    assert heard.events == [("assigned", {T0, T1}), ("lost", {T0, T1})]


async def test_a_member_still_joining_cannot_commit() -> None:
    """At epoch 0 the member has no epoch for its commits to name (one meaning of being in
    the group, for both protocols): a commit is refused, and none goes to the coordinator."""

    def joining(request: Any) -> dict[str, Any]:
        return {"member_id": request.member_id, "member_epoch": 0}

    async with FakeCoordinator(joining) as fake, member(fake) as consumer:
        await fake.until_heartbeat(lambda r: True, timeout=WAIT)
        with pytest.raises(CommitFailedError, match="not a member of the group now"):
            await consumer.commit({T0: 5})
    assert fake.commits == []


async def until_state(consumer: Consumer, state: MemberState) -> None:
    while consumer._group is None or consumer._group.state is not state:
        await asyncio.sleep(0.01)
