"""Classic consumer groups on the embedded Tansu (several members: see docs/design.md for why
not the mock cluster). Session timeouts are small: Tansu holds every JoinGroup for half of it.
"""

from __future__ import annotations

import asyncio

import pytest

from kafkawire.consumer import (
    CommitFailedError,
    Consumer,
    OffsetAndMetadata,
    TopicPartition,
    UnsupportedGroupProtocolError,
)
from kafkawire.consumer.group.member_state import MemberState
from kafkawire.errors import InconsistentGroupProtocolError
from kafkawire.testing.pytest_plugin import Broker

from .helpers import Committing, Recorder, fresh_group, fresh_topic, member, produce, read, until

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
async def test_two_members_split_and_one_takes_all_back(
    tansu_broker: Broker, assignor: str
) -> None:
    topic = await fresh_topic(tansu_broker, partitions=4)
    group = fresh_group(assignor)
    everything = {TopicPartition(topic, p) for p in range(4)}
    heard = Recorder()
    a = member(tansu_broker, topic, group, partition_assignment_strategy=assignor)
    a.subscribe([topic], heard)
    async with a:
        await until(lambda: a.assignment() == everything, a)
        async with member(tansu_broker, topic, group, partition_assignment_strategy=assignor) as b:
            await until(lambda: len(a.assignment()) == len(b.assignment()) == 2, a, b)
            assert a.assignment() | b.assignment() == everything
            if assignor == "range":  # contiguous ranges, whoever sorts first
                assert {tp.partition for tp in a.assignment()} in ({0, 1}, {2, 3})
            kept = a.assignment()
        await until(lambda: a.assignment() == everything, a)
    revoked = [tps for event, tps in heard.events if event == "revoked"]
    if assignor == "cooperative-sticky":  # only what moved was revoked, never what a kept
        assert all(not (tps & kept) for tps in revoked[:-1])
    else:  # eager: everything, at each rebalance
        assert revoked[0] == everything
    assert ("lost", everything) not in heard.events


async def test_partitions_are_revoked_in_a_poll_not_behind_the_application(
    tansu_broker: Broker,
) -> None:
    """Records a poll returned can still be committed after the group starts to rebalance:
    their partitions are revoked in the next poll, as in Kafka's Java client. (Revoked behind
    the application's back, the commit would leave them out without a word, and their next
    owner would read them again.)"""
    topic = await fresh_topic(tansu_broker, partitions=2)
    for p in range(2):
        await produce(tansu_broker, topic, [b"%d" % i for i in range(10)], partition=p)
    group = fresh_group("revoke-in-poll")
    heard = Recorder()
    a = member(tansu_broker, topic, group, enable_auto_commit=False, max_poll_records=3)
    a.subscribe([topic], heard)
    async with a:
        got = await read(a, 3)
        positions = {tp: await a.position(tp) for tp in a.assignment()}
        firsts: list[tuple[int, int]] = []
        b = Committing(member(tansu_broker, topic, group, enable_auto_commit=False), topic, firsts)
        async with b.consumer:
            await until(lambda: a._group.state is not MemberState.STABLE, b)  # type: ignore[union-attr]
            assert [e for e, _ in heard.events] == ["assigned"]
            await a.commit()  # the application processed what it got, and commits
            assert {tp: await a.committed(tp) for tp in positions} == {
                tp: OffsetAndMetadata(offset) for tp, offset in positions.items()
            }
            await until(lambda: firsts != [], a, b)
            assert heard.events[1] == ("revoked", set(positions))
    ((partition, offset),) = firsts  # where b started: after what a got
    assert offset == positions[TopicPartition(topic, partition)]
    assert (partition, offset) not in {(r.partition, r.offset) for r in got}


async def test_three_members_join_and_leave(tansu_broker: Broker) -> None:
    topic = await fresh_topic(tansu_broker, partitions=6)
    group = fresh_group("three")
    members: list[Consumer] = []
    try:
        for _ in range(3):
            members.append(
                member(tansu_broker, topic, group, partition_assignment_strategy="roundrobin")
            )
            await members[-1].start()
        await until(lambda: [len(m.assignment()) for m in members] == [2, 2, 2], *members)
        gone = members.pop()
        await gone.close()
        await until(lambda: [len(m.assignment()) for m in members] == [3, 3], *members)
    finally:
        for m in members:
            await m.close()


async def test_commit_and_resume_after_a_restart(tansu_broker: Broker) -> None:
    topic = await fresh_topic(tansu_broker)
    await produce(tansu_broker, topic, [b"%d" % i for i in range(20)])
    group = fresh_group("resume")
    tp = TopicPartition(topic, 0)
    async with member(tansu_broker, topic, group, enable_auto_commit=False) as first:
        async for record in first:
            if record.offset == 9:
                break
        await first.commit()  # what was yielded: 0-9, though more was fetched
        assert await first.committed(tp) == OffsetAndMetadata(10)
        await first.commit({tp: 12})
        assert await first.committed(tp) == OffsetAndMetadata(12)
    async with member(tansu_broker, topic, group) as second:
        async for record in second:
            assert record.offset == 12
            break
    async with member(tansu_broker, topic, group) as third:  # auto-committed on close
        assert (await read(third, 1))[0].offset == 13


async def test_heartbeats_go_on_during_a_slow_handler(tansu_broker: Broker) -> None:
    topic = await fresh_topic(tansu_broker, partitions=2)
    group = fresh_group("slow")
    heard = Recorder()
    async with member(tansu_broker, topic, group) as a:
        a.subscribe([topic], heard)
        await until(lambda: len(a.assignment()) == 2, a)
        generation = a._group.generation  # type: ignore[union-attr]
        await asyncio.sleep(3)  # the handler takes longer than the session timeout
        await a.getmany(timeout_ms=100)
        assert a._group.generation == generation  # type: ignore[union-attr]
        assert len(a.assignment()) == 2
    assert [e for e, _ in heard.events] == ["assigned", "revoked"]


async def test_a_member_killed_without_leave_group_is_expired(tansu_broker: Broker) -> None:
    topic = await fresh_topic(tansu_broker, partitions=2)
    group = fresh_group("killed")
    async with member(tansu_broker, topic, group) as a:
        b = member(tansu_broker, topic, group)
        await b.start()
        await until(lambda: len(a.assignment()) == len(b.assignment()) == 1, a, b)
        # As if b's process died: its heartbeats stop and it sends no LeaveGroup.
        heartbeats = b._group._task  # type: ignore[union-attr]
        assert heartbeats is not None
        heartbeats.cancel()
        await asyncio.gather(heartbeats, return_exceptions=True)
        b._group = None
        await b.close()
        await until(lambda: len(a.assignment()) == 2, a)  # after b's session expired


async def test_max_poll_interval_moves_the_partitions_of_a_stuck_member(
    tansu_broker: Broker,
) -> None:
    """a stops polling: it leaves the group, b gets its partition; a hears that it lost it in
    its next poll (as in Kafka's Java client), and joins again."""
    topic = await fresh_topic(tansu_broker, partitions=2)
    group = fresh_group("stuck")
    heard = Recorder()
    a = member(tansu_broker, topic, group, max_poll_interval_ms=1500)
    a.subscribe([topic], heard)
    async with a, member(tansu_broker, topic, group, max_poll_interval_ms=1500) as b:
        await until(lambda: len(a.assignment()) == len(b.assignment()) == 1, a, b)
        kept = a.assignment()
        await until(lambda: len(b.assignment()) == 2, b)  # a does not poll
        assert [e for e, _ in heard.events] == ["assigned"]  # nothing behind its back
        with pytest.raises(CommitFailedError, match="not a member"):
            await a.commit()  # what it read is b's to read again
        await a.getmany(timeout_ms=0)
        assert heard.events[-1] == ("lost", kept)
        await until(lambda: len(a.assignment()) == len(b.assignment()) == 1, a, b)


async def test_the_consumer_group_protocol_needs_the_api(tansu_broker: Broker) -> None:
    consumer = Consumer(
        "t", bootstrap_servers=tansu_broker.bootstrap, group_id="g", group_protocol="consumer"
    )
    with pytest.raises(UnsupportedGroupProtocolError, match="ConsumerGroupHeartbeat"):
        await consumer.start()


async def test_an_assignor_the_group_does_not_share_is_an_error(tansu_broker: Broker) -> None:
    topic = await fresh_topic(tansu_broker)
    group = fresh_group("mixed")
    async with member(tansu_broker, topic, group, partition_assignment_strategy="range") as a:
        await until(lambda: len(a.assignment()) == 1, a)
        async with member(
            tansu_broker, topic, group, partition_assignment_strategy="roundrobin"
        ) as b:
            with pytest.raises(InconsistentGroupProtocolError):
                await asyncio.wait_for(b.getmany(timeout_ms=10_000), 10)
