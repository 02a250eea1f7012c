"""Static membership (KIP-345) on Tansu: a member with a ``group_instance_id`` that closes
sends no LeaveGroup (as Kafka's Java client), so a restart within its session timeout gets its
partitions back without a rebalance, and resumes where it committed.

Tansu holds a static member's JoinGroup for half its session timeout (at least 3 s) and its
SyncGroup for 3 s, and neither keeps its session alive: a restart keeps the member only if
half the session timeout plus 3 s fit in it. The session timeouts here are 10 s (the other
member's too: with a shorter one, Tansu completed rebalances without the static member, over
and over).
"""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.testing.pytest_plugin import Broker
from tests.net.proxy import Proxy

from .helpers import Committing, fresh_group, fresh_topic, member, produce_to_all, until
from .proxied import LEAVE_GROUP, Cutter, port_of, through

pytestmark = pytest.mark.asyncio(loop_scope="session")

PARTITIONS, EACH = 4, 20


async def test_a_static_member_restarts_without_a_rebalance(tansu_broker: Broker) -> None:
    topic = await fresh_topic(tansu_broker, partitions=PARTITIONS)
    everything = await produce_to_all(tansu_broker, topic, PARTITIONS, EACH)
    group = fresh_group("static")
    manual: dict[str, Any] = {
        "enable_auto_commit": False,
        "max_poll_records": 3,
        "session_timeout_ms": 10_000,
    }
    static: dict[str, Any] = manual | {"group_instance_id": "static-1"}
    firsts: list[tuple[int, int]] = []
    async with Proxy(port_of(tansu_broker)) as proxy:
        requests = Cutter(proxy)  # only watches: it is never armed
        before = Committing(through(proxy, topic, group, **static), topic, firsts)
        other = Committing(member(tansu_broker, topic, group, **manual), topic)
        async with other.consumer:
            async with before.consumer:
                await until(
                    lambda: (
                        len(before.consumer.assignment()) == 2 == len(other.consumer.assignment())
                    ),
                    before,
                    other,
                )
                await until(lambda: len(before.done) >= 6, before, other)
                kept = before.consumer.assignment()
                generation = before.consumer._group.generation  # type: ignore[union-attr]
                heard = list(other.events)
            assert LEAVE_GROUP not in requests.seen
            resumed_from = len(firsts)
            after = Committing(through(proxy, topic, group, **static), topic, firsts)
            async with after.consumer:
                await until(lambda: after.consumer.assignment() != set(), after, other)
                assert after.consumer.assignment() == kept
                assert after.consumer._group.generation == generation  # type: ignore[union-attr]
                assert other.events == heard  # no rebalance: nothing revoked from the other
                await until(
                    lambda: len(before.done + after.done + other.done) >= len(everything),
                    after,
                    other,
                )
    # It resumed where it committed: each partition after the last record it had done.
    last = dict(before.done)  # the last offset done in each partition
    assert dict(firsts[resumed_from:]) == {
        tp.partition: last.get(tp.partition, -1) + 1 for tp in kept
    }
    done = sorted(before.done + after.done + other.done)
    assert done == sorted(everything)  # nothing lost, nothing twice
