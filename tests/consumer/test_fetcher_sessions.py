"""The fetcher's fetch sessions (KIP-227) against a fake leader that keeps them as Kafka does
(``tests.consumer.session_broker``), speaking real Fetch bytes."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkawire.consumer import Consumer, ConsumerRecord, TopicPartition
from tests.budgets import examples
from tests.cluster.hostile import FakeCluster
from tests.consumer.helpers import read
from tests.consumer.session_broker import Fault, SeenFetch, SessionLeader

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))
FAST = {"retry_backoff_ms": 1, "fetch_max_wait_ms": 20}


def offsets_of(records: list[ConsumerRecord]) -> dict[int, list[int]]:
    got: dict[int, list[int]] = {}
    for r in records:
        assert r.value == b"%d:%d" % (r.partition, r.offset)
        got.setdefault(r.partition, []).append(r.offset)
    return got


async def consume(leader: SessionLeader, count: int, **options: Any) -> list[ConsumerRecord]:
    """``count`` records of T0-T2, read from offset 0 through ``leader``."""
    async with (
        FakeCluster(1, leader) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, **FAST, **options) as consumer,
    ):
        consumer.assign([T0, T1, T2])
        for tp in (T0, T1, T2):
            consumer.seek(tp, 0)
        return await read(consumer, count)


async def test_a_session_sends_only_what_changed() -> None:
    leader = SessionLeader([9, 0, 0])
    got = await consume(leader, 9)
    assert offsets_of(got) == {0: list(range(9))}
    first, *later = leader.fetches
    assert (first.session_id, first.epoch, sorted(first.offsets)) == (0, 0, [0, 1, 2])
    assert later, "no incremental fetch was sent"
    assert [f.session_id for f in later] == [1] * len(later)
    assert [f.epoch for f in later] == list(range(1, len(later) + 1))
    assert {p for f in later for p in f.offsets} == {0}  # the idle partitions are never resent
    assert leader.violations == []


async def test_pause_resume_and_unassign_forget_and_add_partitions() -> None:
    leader = SessionLeader([0, 0, 0])
    async with (
        FakeCluster(1, leader) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, **FAST) as consumer,
    ):
        consumer.assign([T0, T1, T2])
        for tp in (T0, T1, T2):
            consumer.seek(tp, 0)
        await leader.fetch_where(lambda f: f.epoch >= 1)
        consumer.pause(T1)
        paused = await leader.fetch_where(lambda f: 1 in f.forgotten)
        consumer.resume(T1)
        await leader.fetch_where(lambda f: f.epoch > paused.epoch and 1 in f.offsets)
        consumer.assign([T0])
        await leader.fetch_where(lambda f: sorted(f.forgotten) == [1, 2])
        after = len(leader.fetches)
        await leader.fetch_where(lambda f: len(leader.fetches) > after + 1)
    assert paused.offsets == {}
    assert not paused.full
    assert all(set(f.offsets) <= {0} for f in leader.fetches[after:])
    assert leader.violations == []


@pytest.mark.parametrize("code", [70, 71])
async def test_a_lost_session_falls_back_to_a_full_fetch(code: int) -> None:
    leader = SessionLeader([9, 4, 0], faults=["ok", "ok", code])
    got = await consume(leader, 13)
    assert offsets_of(got) == {0: list(range(9)), 1: list(range(4))}
    refused = leader.fetches[2]
    assert not refused.full
    retry = leader.fetches[3]
    assert retry.full
    assert sorted(retry.offsets) == [0, 1, 2]  # every partition, at the positions reached
    assert retry.session_id == (0 if code == 70 else refused.session_id)
    assert leader.fetches[4].session_id == 2  # the new session
    assert leader.violations == []


async def test_a_broker_without_sessions_gets_full_fetches() -> None:
    leader = SessionLeader([7, 2, 0], sessions=False)
    got = await consume(leader, 9)
    assert offsets_of(got) == {0: list(range(7)), 1: [0, 1]}
    assert all((f.session_id, f.epoch) == (0, 0) for f in leader.fetches)
    assert all(sorted(f.offsets) == [0, 1, 2] for f in leader.fetches)


async def test_an_answer_for_a_partition_outside_the_session_is_dropped() -> None:
    leader = SessionLeader([0, 0, 0, 5])
    async with (
        FakeCluster(1, leader, partitions=4) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, **FAST) as consumer,
    ):
        consumer.assign([T0, T1, T2])
        for tp in (T0, T1, T2):
            consumer.seek(tp, 0)
        opened = await leader.fetch_where(lambda f: f.epoch >= 1)
        leader.extra_partition = 3  # answered with the records below, which must come again
        leader.logs[0] = 6
        got = await read(consumer, 6)
    assert offsets_of(got) == {0: list(range(6))}
    after = leader.fetches[leader.fetches.index(opened) :]
    assert any(f.full and f.session_id == 1 for f in after)  # started over
    assert leader.violations == []


async def test_sessions_by_topic_id_forget_by_topic_id() -> None:
    topic_id = uuid.uuid4()
    leader = SessionLeader([0, 0, 0], topic_id=topic_id)
    async with (
        FakeCluster(1, leader, topic_id=topic_id) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, **FAST) as consumer,
    ):
        consumer.assign([T0, T1])
        for tp in (T0, T1):
            consumer.seek(tp, 0)
        await leader.fetch_where(lambda f: f.epoch >= 1)
        consumer.assign([T0])
        forgot = await leader.fetch_where(lambda f: f.forgotten == [1])
    assert not forgot.full
    assert leader.violations == []


FAULTS: list[Fault] = ["ok", "ok", "ok", 70, 71, "drop"]


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    faults=st.lists(st.sampled_from(FAULTS), max_size=12),
    logs=st.lists(st.integers(0, 8), min_size=3, max_size=3),
    batch=st.integers(1, 4),
)
def test_every_record_once_in_order_whatever_the_session_errors(
    faults: list[Fault], logs: list[int], batch: int
) -> None:
    leader = SessionLeader(logs, faults=faults, batch=batch)
    got = asyncio.run(consume(leader, sum(logs)))
    expected = {p: list(range(n)) for p, n in enumerate(logs) if n}
    assert offsets_of(got) == expected
    assert leader.violations == []


def test_the_property_can_fail() -> None:
    """The fake notices a client that breaks the protocol (here: an epoch out of turn)."""
    leader = SessionLeader([3, 0, 0])
    seen = SeenFetch(session_id=5, epoch=2, offsets={}, forgotten=[], leader_epochs={})
    assert leader._answer(seen) is None
    assert leader._refusal(seen) == 70
    assert leader.violations == ["incremental fetch with unknown session 5"]
