"""kafkawire's consumer groups against the fake cluster's group coordinator, end to end.

Classic groups with each assignor, static membership, KIP-848 groups, commits and resumes, a
member that stops polling, and a group shared with aiokafka. The fake's timers are short
(sessions of a second, heartbeats every 50 ms, no initial rebalance delay), so a rebalance
takes a few heartbeats: each test takes a fraction of a second. Members process what a poll
returns and then commit, and commit in their revoke callback (``Committing``): between them
every record is then committed exactly once, which each test checks.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from typing import Any

import pytest

from kafkawire.consumer import CommitFailedError, Consumer, OffsetAndMetadata, TopicPartition
from kafkawire.testing.fake import FakeCluster, ManualClock
from tests.consumer.helpers import Committing, produce_to_all, until

PARTITIONS, EACH = 6, 10
GROUP, TOPIC = "g", "t"
# Consumer settings: a session of a second, heartbeats every 50 ms, long polls of 50 ms (a
# partition assigned while its leader's Fetch is in flight waits for that answer, as in Java).
SHORT: dict[str, Any] = {
    "session_timeout_ms": 1000,
    "heartbeat_interval_ms": 50,
    "auto_offset_reset": "earliest",
    "enable_auto_commit": False,
    "max_poll_records": 3,
    "fetch_max_wait_ms": 50,
}


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    """The fake with short group timers: sessions from 100 ms (Kafka refuses under 6 s by
    default), KIP-848 heartbeats every 50 ms and sessions of a second; on a clock that stands
    still, so that no session expires when a loaded machine delays a heartbeat: members come
    and go by joining and leaving, as each test says (a member that stops polling leaves by
    itself, on its own real-time ``max_poll_interval_ms``)."""
    async with FakeCluster(
        group_min_session_timeout_ms=100,
        consumer_group_heartbeat_interval_ms=50,
        consumer_group_session_timeout_ms=1000,
        clock=ManualClock(),
    ) as cluster:
        cluster.create_topic(TOPIC, PARTITIONS)
        yield cluster


def member(cluster: FakeCluster, **options: Any) -> Committing:
    consumer = Consumer(bootstrap_servers=cluster.bootstrap, group_id=GROUP, **SHORT | options)
    return Committing(consumer, TOPIC)


def partitions(member: Committing) -> set[int]:
    return {tp.partition for tp in member.consumer.assignment()}


def done_once(members: Iterable[Committing], records: set[tuple[int, int]]) -> bool:
    """Whether every record was committed, and none twice (which the test then asserts)."""
    counted = Counter(record for m in members for record in m.done)
    assert all(n == 1 for n in counted.values()), "a record was committed twice"
    return set(counted) == records


async def produce_more(cluster: FakeCluster, start: int) -> set[tuple[int, int]]:
    """``EACH`` more records to every partition (offsets from ``start``)."""
    for p in range(PARTITIONS):
        cluster.produce(TOPIC, p, [b"%d-%d" % (p, start + i) for i in range(EACH)])
    return {(p, start + i) for p in range(PARTITIONS) for i in range(EACH)}


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
async def test_three_members_split_a_topic_and_two_take_over_a_leaver(
    cluster: FakeCluster, assignor: str
) -> None:
    records = await produce_to_all(cluster, TOPIC, PARTITIONS, EACH)
    members = [member(cluster, partition_assignment_strategy=assignor) for _ in range(3)]
    for m in members:
        await m.consumer.start()
    try:
        await until(lambda: [len(partitions(m)) for m in members] == [2, 2, 2], *members)
        assert set().union(*(partitions(m) for m in members)) == set(range(PARTITIONS))
        if assignor == "range":  # contiguous ranges, by member id
            assert sorted(min(partitions(m)) for m in members) == [0, 2, 4]
        await until(lambda: done_once(members, records), *members)
        leaver, *stayers = members
        kept = [partitions(m) for m in stayers]
        await leaver.consumer.close()
        records |= await produce_more(cluster, EACH)
        await until(lambda: [len(partitions(m)) for m in stayers] == [3, 3], *stayers)
        if assignor in ("sticky", "cooperative-sticky"):  # each keeps what it had
            assert all(before <= partitions(m) for before, m in zip(kept, stayers, strict=True))
        await until(lambda: done_once(members, records), *stayers)
    finally:
        for m in members:
            await m.consumer.close()
    assert cluster.requests.of("LeaveGroup")  # the leaver said so: no session to wait out


async def test_a_static_member_restarts_without_a_rebalance(cluster: FakeCluster) -> None:
    """KIP-345: a static member that closes sends no LeaveGroup; back within its session
    timeout under the same instance id, it gets its partitions and generation back, and the
    other member hears nothing."""
    records = await produce_to_all(cluster, TOPIC, PARTITIONS, EACH)
    before = member(cluster, group_instance_id="static-1")
    other = member(cluster)
    async with other.consumer:
        async with before.consumer:
            await until(
                lambda: len(partitions(before)) == 3 == len(partitions(other)), before, other
            )
            await until(lambda: len(before.done) >= 6, before, other)
            kept = before.consumer.assignment()
            generation = before.consumer._group.generation.generation_id  # type: ignore[union-attr]
            heard = list(other.events)
        assert cluster.requests.of("LeaveGroup") == []
        after = member(cluster, group_instance_id="static-1")
        async with after.consumer:
            await until(lambda: after.consumer.assignment() != set(), after, other)
            assert after.consumer.assignment() == kept
            # The same generation; a new member id, as Kafka replaces a static member's.
            assert after.consumer._group.generation.generation_id == generation  # type: ignore[union-attr]
            assert other.events == heard
            await until(lambda: done_once([before, after, other], records), after, other)


async def test_a_kip848_group_of_three_joins_and_leaves(cluster: FakeCluster) -> None:
    """KIP-848 (``group_protocol="consumer"``): the coordinator assigns; members join one by
    one and leave one by one, and the last one holds every partition; each record once."""
    records = await produce_to_all(cluster, TOPIC, PARTITIONS, EACH)
    members: list[Committing] = []
    everything = set(range(PARTITIONS))
    try:
        for count in (1, 2, 3):
            members.append(member(cluster, group_protocol="consumer"))
            await members[-1].consumer.start()
            await until(
                lambda count=count: (  # type: ignore[misc]
                    sorted(len(partitions(m)) for m in members) == [PARTITIONS // count] * count
                ),
                *members,
            )
        assert set().union(*(partitions(m) for m in members)) == everything
        staying = list(members)
        for more in (EACH, 2 * EACH):
            await staying.pop(0).consumer.close()
            records |= await produce_more(cluster, more)
            await until(
                lambda: set().union(*(partitions(m) for m in staying)) == everything, *staying
            )
        await until(lambda: done_once(members, records), *staying)
    finally:
        for m in members:
            await m.consumer.close()
    assert cluster.requests.of("JoinGroup") == []  # no classic request at all


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
async def test_commits_are_where_the_next_member_resumes(
    cluster: FakeCluster, protocol: str
) -> None:
    await produce_to_all(cluster, TOPIC, 1, 20)
    tp = TopicPartition(TOPIC, 0)
    options = {"group_protocol": protocol, "enable_auto_commit": False}
    first = Consumer(TOPIC, bootstrap_servers=cluster.bootstrap, group_id=GROUP, **SHORT | options)
    async with first:
        async for record in first:
            if record.offset == 9:
                break
        await first.commit()  # what was handed out: 0-9, though more was fetched
        # With the leader epoch of the record before (KIP-320), as the fake answered it.
        assert await first.committed(tp) == OffsetAndMetadata(10, leader_epoch=0)
        await first.commit({tp: (12, "twelve")})
        assert await first.committed(tp) == OffsetAndMetadata(12, "twelve")
    second = Consumer(TOPIC, bootstrap_servers=cluster.bootstrap, group_id=GROUP, **SHORT | options)
    async with second:
        async for record in second:
            assert record.offset == 12
            break


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
async def test_a_member_that_stops_polling_loses_its_partitions(
    cluster: FakeCluster, protocol: str
) -> None:
    """Past ``max_poll_interval_ms`` without a poll, a member leaves the group (as Java's):
    the other takes every partition, and the slow one hears them lost at its next poll and
    cannot commit what it read before."""
    await produce_to_all(cluster, TOPIC, PARTITIONS, EACH)
    options = {"group_protocol": protocol}
    slow = member(cluster, max_poll_interval_ms=300, **options)
    busy = member(cluster, **options)
    async with slow.consumer, busy.consumer:
        await until(lambda: len(partitions(slow)) == 3 == len(partitions(busy)), slow, busy)
        lost = set(slow.consumer.assignment())
        await until(lambda: len(partitions(busy)) == PARTITIONS, busy)  # slow does not poll
        with pytest.raises(CommitFailedError):
            await slow.consumer.commit(dict.fromkeys(lost, 1))
        await slow.consumer.getmany(timeout_ms=10)
        assert ("lost", lost) in slow.events
        # It rejoins with that poll, and the group splits again.
        await until(lambda: len(partitions(slow)) == 3 == len(partitions(busy)), slow, busy)


async def test_aiokafka_and_kafkawire_share_a_group(cluster: FakeCluster) -> None:
    """Another client in the group: aiokafka and kafkawire members (range assignor) split
    the topic, and each record is committed once between them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        aiokafka = pytest.importorskip("aiokafka")
        from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    records = await produce_to_all(cluster, TOPIC, PARTITIONS, EACH)
    ours = member(cluster)
    theirs = aiokafka.AIOKafkaConsumer(
        TOPIC,
        bootstrap_servers=cluster.bootstrap,
        group_id=GROUP,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=1000,
        heartbeat_interval_ms=50,
        max_poll_records=3,
        partition_assignment_strategy=(RangePartitionAssignor,),
    )
    their_done: list[tuple[int, int]] = []

    async def their_step() -> None:
        batch = await theirs.getmany(timeout_ms=50)
        if batch:
            try:
                await theirs.commit()
            except aiokafka.errors.CommitFailedError:
                return  # a rebalance (eager): the partitions' next owner reads them again
            their_done.extend((r.partition, r.offset) for rs in batch.values() for r in rs)

    class Theirs:
        step = staticmethod(their_step)

    # aiokafka's start() returns once it is in the group: so it goes first, alone (with a
    # member that does not poll, the rebalance would wait for it: it rejoins in its poll).
    await theirs.start()
    try:
        async with ours.consumer:
            await until(
                lambda: len(partitions(ours)) == 3 == len(theirs.assignment()), ours, Theirs()
            )
            await until(lambda: Counter(ours.done + their_done) == Counter(records), ours, Theirs())
    finally:
        await theirs.stop()
    described = cluster.requests.of("JoinGroup")
    assert {r.header.client_id.split("-")[0] for r in described} >= {"aiokafka", "kafkawire"}
