"""Consumer groups when the coordinator connection breaks mid-rebalance, and a member fenced by
another with its group instance id.

The member under test reaches Tansu through a loopback proxy (tests/net/proxy.py) that cuts
the connection carrying a chosen request when the broker's answer arrives, and drops the
answer: the broker has acted on the JoinGroup, SyncGroup or Heartbeat, the member never learns
how. Kafka's Java client then looks the coordinator up again and tries again; the group must
end with every partition owned by one member, each starting at the offset committed before
the cut, and every record consumed once (members commit as the documentation says: see
``Committing``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.errors import FencedInstanceIdError
from kafkawire.messages.heartbeat import v4 as heartbeat
from kafkawire.testing.pytest_plugin import Broker, kafka_brokers, tansu_bug
from tests.net.proxy import Proxy

from .helpers import FAST, Committing, fresh_group, fresh_topic, member, produce_to_all, until
from .proxied import (
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    SYNC_GROUP,
    Cutter,
    port_of,
    through,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")

PARTITIONS, EACH = 4, 30


async def committed(consumer: Consumer, topic: str) -> dict[int, int]:
    found = {p: await consumer.committed(TopicPartition(topic, p)) for p in range(PARTITIONS)}
    return {p: o.offset for p, o in found.items() if o is not None}


def check_the_group(members: list[Committing], everything: set[Any]) -> None:
    """Each partition owned by one member, every member owning some, every record done once."""
    owned = [m.consumer.assignment() for m in members]
    assert all(owned)
    assert sum(len(o) for o in owned) == len(set().union(*owned)) == PARTITIONS
    done = Counter(d for m in members for d in m.done)
    assert {d for d, n in done.items() if n > 1} == set(), "read and committed twice"
    assert set(everything) - set(done) == set(), "lost"


@pytest.mark.parametrize(
    ("api_key", "skip", "cut_leader"),
    [(JOIN_GROUP, 1, False), (SYNC_GROUP, 0, False), (SYNC_GROUP, 0, True)],
    ids=["JoinGroup-held-by-the-broker", "SyncGroup-of-a-follower", "SyncGroup-of-the-leader"],
)
async def test_a_cut_mid_rebalance(
    tansu_broker: Broker, api_key: int, skip: int, cut_leader: bool
) -> None:
    """The member that joins second is the follower (Tansu makes the first the leader). Its
    first JoinGroup is answered MEMBER_ID_REQUIRED at once (KIP-394); the one cut is the
    second, which the broker holds until the group has formed."""
    topic = await fresh_topic(tansu_broker, partitions=PARTITIONS)
    everything = await produce_to_all(tansu_broker, topic, PARTITIONS, EACH)
    group = fresh_group("cut")
    options: dict[str, Any] = {"enable_auto_commit": False, "max_poll_records": 5}
    firsts: list[tuple[int, int]] = []  # the first offset read after each assignment
    async with Proxy(port_of(tansu_broker)) as proxy:
        cutter = Cutter(proxy)
        cut = through(proxy, topic, group, **options)
        direct = member(tansu_broker, topic, group, **options)
        first, second = (cut, direct) if cut_leader else (direct, cut)
        one = Committing(first, topic, firsts)
        async with first:
            await until(lambda: len(one.done) >= 20, one)
            before = await committed(first, topic)
            first.pause(*first.assignment())  # its commits stay where the cut finds them
            cut_from = len(firsts)
            cutter.arm(api_key, skip=skip)
            two = Committing(second, topic, firsts)
            async with second:
                await until(
                    lambda: len(first.assignment()) == len(second.assignment()) == 2, one, two
                )
                assert (one if cut_leader else two).consumer._group.leader is cut_leader  # type: ignore[union-attr]
                await until(
                    lambda: sum(len(m.done) for m in (one, two)) >= len(everything), one, two
                )
                check_the_group([one, two], everything)
    cutter.check_sent_again_after_finding_the_coordinator(api_key)
    # Where each partition started after the cut: at the offset committed before it.
    resumed: dict[int, int] = {}
    for partition, offset in firsts[cut_from:]:
        resumed.setdefault(partition, offset)
    assert resumed == {p: before.get(p, 0) for p in range(PARTITIONS)}


async def test_a_cut_heartbeat_changes_nothing(tansu_broker: Broker) -> None:
    topic = await fresh_topic(tansu_broker, partitions=PARTITIONS)
    everything = await produce_to_all(tansu_broker, topic, PARTITIONS, EACH)
    group = fresh_group("heartbeat")
    options: dict[str, Any] = {"enable_auto_commit": False, "max_poll_records": 5}
    async with Proxy(port_of(tansu_broker)) as proxy:
        cutter = Cutter(proxy)
        one = Committing(member(tansu_broker, topic, group, **options), topic)
        two = Committing(through(proxy, topic, group, **options), topic)
        async with one.consumer, two.consumer:
            await until(
                lambda: len(one.consumer.assignment()) == 2 == len(two.consumer.assignment()),
                one,
                two,
            )
            generations = [m.consumer._group.generation for m in (one, two)]  # type: ignore[union-attr]
            heard = [list(m.events) for m in (one, two)]
            cutter.arm(HEARTBEAT)
            await until(
                lambda: cutter.cut_at is not None and HEARTBEAT in cutter.after_cut(), one, two
            )
            await until(lambda: len(one.done) + len(two.done) >= len(everything), one, two)
            check_the_group([one, two], everything)
            assert [m.consumer._group.generation for m in (one, two)] == generations  # type: ignore[union-attr]
            assert [m.events for m in (one, two)] == heard  # no rebalance
    cutter.check_sent_again_after_finding_the_coordinator(HEARTBEAT)


def fence_heartbeats(response: Any) -> Any:
    """What Kafka answers the heartbeat of a member another consumer with its group instance
    id has replaced."""
    if isinstance(response, heartbeat.HeartbeatResponse):
        return dataclasses.replace(response, error_code=FencedInstanceIdError.code)
    return response


async def test_a_fenced_member_stops_with_a_fatal_error(tansu_broker: Broker) -> None:
    """FENCED_INSTANCE_ID (injected: Tansu never fences) is fatal, as Java's
    FencedInstanceIdException is: the member loses its partitions, every poll raises it, and
    it neither joins again (that would fence the other one in turn) nor sends LeaveGroup."""
    topic = await fresh_topic(tansu_broker, partitions=PARTITIONS)
    await produce_to_all(tansu_broker, topic, PARTITIONS, 3)
    async with Proxy(port_of(tansu_broker)) as proxy:
        cutter = Cutter(proxy)
        static = Committing(
            through(proxy, topic, fresh_group("fenced"), group_instance_id="static-1"), topic
        )
        async with static.consumer:
            await until(lambda: len(static.consumer.assignment()) == PARTITIONS, static)
            proxy.rewrite = fence_heartbeats
            fenced_from = len(cutter.seen)
            with pytest.raises(FencedInstanceIdError):
                await until(lambda: False, static, timeout=10)
            with pytest.raises(FencedInstanceIdError):
                await static.consumer.getmany(timeout_ms=100)
            assert static.consumer.assignment() == set()
            assert static.events[-1] == (
                "lost",
                {TopicPartition(topic, p) for p in range(PARTITIONS)},
            )
        assert JOIN_GROUP not in cutter.seen[fenced_from:]
        assert LEAVE_GROUP not in cutter.seen


@kafka_brokers(
    tansu=tansu_bug(
        "a second consumer with a group instance id in use shares the member id; no fencing"
    ),
    mock_cluster=False,
)
async def test_a_second_consumer_with_the_same_instance_id_fences_the_first(
    kafka_broker: Broker,
) -> None:
    topic = await fresh_topic(kafka_broker, partitions=2)
    group = fresh_group("same-instance")
    async with member(kafka_broker, topic, group, group_instance_id="twin") as first:
        await until(lambda: len(first.assignment()) == 2, first)
        async with member(kafka_broker, topic, group, group_instance_id="twin"):
            # Kafka fences the first at its next heartbeat after the second's JoinGroup
            # (which Tansu holds for 3 s): polling it for one session timeout more is plenty.
            try:
                await until(lambda: False, first, timeout=3 + FAST["session_timeout_ms"] / 1000)
            except FencedInstanceIdError:
                return
            except AssertionError:
                pass
            raise AssertionError("the first consumer was not fenced; both own every partition")
