"""The KIP-848 consumer group protocol (``group_protocol="consumer"``) on librdkafka's mock
cluster, three brokers; Tansu lacks ConsumerGroupHeartbeat (see test_groups_tansu).

The mock names a heartbeat interval of 3 s and hands a partition over only once its owner
has stopped reporting it, so a rebalance takes up to two intervals. Each test states what
must hold rather than when.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.cluster import RequestRefusedError
from kafkawire.consumer import CommitFailedError, Consumer, ConsumerRecord, TopicPartition
from kafkawire.testing.pytest_plugin import Broker

from .helpers import Recorder, fresh_topic, produce

pytestmark = pytest.mark.asyncio(loop_scope="session")

SETTLE = 30  # seconds a group may take to settle: several heartbeat intervals of the mock
_groups = itertools.count()


def member(broker: Broker, group: str, **options: Any) -> Consumer:
    return Consumer(
        bootstrap_servers=broker.bootstrap,
        group_id=group,
        group_protocol="consumer",
        auto_offset_reset="earliest",
        **options,
    )


class Group:
    """Members of one group on one topic, polled together; what they read is kept."""

    def __init__(self, broker: Broker, topic: str) -> None:
        self.broker, self.topic = broker, topic
        self.group = f"kip848-{next(_groups)}"
        self.members: dict[str, Consumer] = {}
        self.heard: dict[str, Recorder] = {}
        self.read: list[ConsumerRecord] = []
        self.everything = {TopicPartition(topic, p) for p in range(4)}

    async def join(self, name: str, **options: Any) -> Consumer:
        consumer = member(self.broker, self.group, **options)
        self.heard[name] = Recorder()
        consumer.subscribe([self.topic], self.heard[name])
        await consumer.start()
        self.members[name] = consumer
        return consumer

    async def leave(self, name: str) -> None:
        await self.members.pop(name).close()

    async def close(self) -> None:
        for consumer in self.members.values():
            await consumer.close()

    def assignments(self) -> dict[str, set[TopicPartition]]:
        return {name: m.assignment() for name, m in self.members.items()}

    def split(self) -> bool:
        """Every partition owned by exactly one member, and every member owning some."""
        owned = list(self.assignments().values())
        return all(owned) and sorted(tp for a in owned for tp in a) == sorted(self.everything)

    async def poll_until(self, condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + SETTLE
        while not condition():
            assert time.monotonic() < deadline, f"not settled: {self.assignments()}"
            batches = await asyncio.gather(
                *(m.getmany(timeout_ms=100) for m in self.members.values())
            )
            self.read += [r for batch in batches for rs in batch.values() for r in rs]

    async def produce_round(self, label: str) -> list[bytes]:
        """Five records to each partition, and poll until the group has read them all."""
        values = [f"{label}-{p}-{i}".encode() for p in range(4) for i in range(5)]
        for p in range(4):
            await produce(self.broker, self.topic, values[p * 5 : p * 5 + 5], p)
        await self.poll_until(lambda: set(values) <= {r.value for r in self.read})
        return values


async def test_a_single_member_gets_every_partition_and_reads_everything(
    mock_cluster: Broker,
) -> None:
    topic = await fresh_topic(mock_cluster, partitions=4)
    group = Group(mock_cluster, topic)
    try:
        await group.join("a")
        sent = await group.produce_round("one")
        assert group.assignments() == {"a": group.everything}
    finally:
        await group.close()
    assert Counter(r.value for r in group.read) == Counter(sent)
    assert group.heard["a"].events == [
        ("assigned", group.everything),
        ("revoked", group.everything),
    ]


async def test_members_join_and_leave_and_every_record_is_read_once(
    mock_cluster: Broker,
) -> None:
    topic = await fresh_topic(mock_cluster, partitions=4)
    group = Group(mock_cluster, topic)
    sent: list[bytes] = []
    try:
        await group.join("a")
        await group.poll_until(lambda: group.assignments()["a"] == group.everything)
        sent += await group.produce_round("a")
        for step, change in enumerate(["+b", "+c", "-c", "-b"]):
            before = group.assignments()
            seen = {name: len(heard.events) for name, heard in group.heard.items()}
            if change[0] == "+":
                await group.join(change[1])
            else:
                await group.leave(change[1])
            await group.poll_until(group.split)
            sizes = sorted(len(a) for a in group.assignments().values())
            assert sizes == {1: [4], 2: [2, 2], 3: [1, 1, 2]}[len(group.members)]
            after = group.assignments()
            for name in set(before) & set(after):  # a member revokes only what moves away
                revoked = [
                    tps for e, tps in group.heard[name].events[seen[name] :] if e == "revoked"
                ]
                assert set().union(*revoked) == before[name] - after[name], (step, name)
            sent += await group.produce_round(f"step{step}")
    finally:
        await group.close()
    assert Counter(r.value for r in group.read) == Counter(sent)  # none lost, none twice
    assert not [e for heard in group.heard.values() for e, _ in heard.events if e == "lost"]


async def test_commit_then_restart_resumes_at_the_commit(mock_cluster: Broker) -> None:
    topic = await fresh_topic(mock_cluster, partitions=4)
    group = Group(mock_cluster, topic)
    sent = [f"{p}-{i}".encode() for p in range(4) for i in range(10)]
    for p in range(4):
        await produce(mock_cluster, topic, sent[p * 10 : p * 10 + 10], p)
    first = await group.join("first", enable_auto_commit=False)
    try:
        while len(group.read) < 15:
            for records in (await first.getmany(timeout_ms=100, max_records=4)).values():
                group.read += records
        await first.commit()
        positions = {tp: await first.position(tp) for tp in group.everything}
        committed = {tp: await first.committed(tp) for tp in group.everything}
        assert {tp: c.offset if c else 0 for tp, c in committed.items()} == positions
    finally:
        await group.leave("first")
    before = len(group.read)
    await group.join("second")  # auto-commit: on close
    try:
        await group.poll_until(lambda: len(group.read) >= len(sent))
    finally:
        await group.leave("second")
    assert Counter(r.value for r in group.read) == Counter(sent)  # resumed, none twice
    tp, position = next((tp, at) for tp, at in positions.items() if at < 10)
    resumed = [r.offset for r in group.read[before:] if r.partition == tp.partition]
    assert resumed == list(range(position, 10))
    await group.join("third")  # after the second's auto-commit on close
    try:
        more = await group.produce_round("after")
    finally:
        await group.close()
    assert Counter(r.value for r in group.read) == Counter(sent + more)


async def test_a_static_member_restarts_into_its_own_partitions(mock_cluster: Broker) -> None:
    topic = await fresh_topic(mock_cluster, partitions=4)
    group = Group(mock_cluster, topic)
    try:
        await group.join("a", group_instance_id="a")
        await group.join("b", group_instance_id="b")
        await group.poll_until(group.split)
        held = group.assignments()
        seen = len(group.heard["a"].events)
        await group.leave("b")  # epoch -2: the broker keeps b's place
        await group.join("b", group_instance_id="b")
        await group.poll_until(lambda: group.assignments() == held)
        assert group.heard["a"].events[seen:] == []  # a never noticed
    finally:
        await group.close()


async def test_a_member_that_stops_polling_gives_its_partitions_up(mock_cluster: Broker) -> None:
    topic = await fresh_topic(mock_cluster, partitions=4)
    group = Group(mock_cluster, topic)
    try:
        slow = await group.join("slow", max_poll_interval_ms=2000)
        await group.join("busy")
        await group.poll_until(group.split)
        held = slow.assignment()
        busy = group.members.pop("busy")  # polled alone from here on
        deadline = time.monotonic() + SETTLE
        while busy.assignment() != group.everything:
            assert time.monotonic() < deadline, busy.assignment()
            await busy.getmany(timeout_ms=100)
        # Nothing changes behind the application's back: it hears of the loss in its next
        # poll (as in Kafka's Java client), and cannot commit before then.
        assert slow.assignment() == held
        assert group.heard["slow"].events[-1][0] == "assigned"
        with pytest.raises(CommitFailedError, match="not a member"):
            await slow.commit()
        await slow.getmany(timeout_ms=0)
        assert slow.assignment() == set()
        assert group.heard["slow"].events[-1] == ("lost", held)
        group.members["busy"] = busy
        await group.poll_until(group.split)  # the slow one polls again: it joins again
    finally:
        await group.close()


async def test_a_classic_group_on_the_mock_is_told_to_use_the_consumer_protocol(
    mock_cluster: Broker,
) -> None:
    """The mock lists JoinGroup v0-6 and closes the connection on v6: the error says so."""
    topic = await fresh_topic(mock_cluster, partitions=4)
    async with Consumer(
        topic,
        bootstrap_servers=mock_cluster.bootstrap,
        group_id=f"g-classic-{next(_groups)}",
        retry_backoff_ms=10,
    ) as consumer:
        with pytest.raises(RequestRefusedError) as caught:
            await asyncio.wait_for(consumer.getmany(timeout_ms=20_000), SETTLE)
    message = str(caught.value)
    assert "JoinGroup v6" in message
    assert "group_protocol='consumer'" in message
