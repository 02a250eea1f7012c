"""Seeks racing the consumer's own positioning, and commits with nothing to commit, on a fake
leader (``fake_leader.LogLeader``)."""

from __future__ import annotations

import asyncio
from typing import Any

from kafkawire.consumer import Consumer, TopicPartition
from tests.cluster.hostile import FakeCluster
from tests.net.fakebroker import FakeClient

from .fake_leader import LIST_OFFSETS, OFFSET_FETCH, LogLeader, batch
from .helpers import read

T0 = TopicPartition("t", 0)
METADATA, JOIN_GROUP = 3, 11
FAST: dict[str, Any] = {"retry_backoff_ms": 1, "fetch_max_wait_ms": 20}
WAIT = 10  # the bound on every wait: a test must fail, not hang


async def test_a_seek_to_the_beginning_while_the_fetcher_awaits_metadata() -> None:
    """The fetcher planned to fetch from offset 5 and asked for metadata; the application seeks
    to the beginning meanwhile: the partition has no position when the answer comes."""
    leader = LogLeader({0: [batch(0, 3), batch(3, 4)]})
    hold, asked, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        if header.request_api_key != METADATA:
            return await leader(node, client, header, request)
        if hold.is_set() and not release.is_set():
            asked.set()
            await release.wait()
        return brokers._metadata(header.request_api_version)

    async with (
        FakeCluster(1, handler, metadata_from=set()) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, **FAST) as consumer,
    ):
        hold.set()
        consumer._cluster.mark_metadata_stale()  # the fetcher's plan asks for metadata
        consumer.assign([T0])
        consumer.seek(T0, 5)
        await asyncio.wait_for(asked.wait(), WAIT)
        consumer.seek_to_beginning(T0)
        release.set()
        got = await read(consumer, 7, timeout=WAIT)
    assert [r.offset for r in got] == list(range(7))


async def test_a_seek_made_after_assign_is_not_overwritten_by_the_committed_offset() -> None:
    """The committed offset (2) arrives after the application seeked to the beginning, before
    that reset is applied: the application's choice stands."""
    leader = LogLeader({0: [batch(0, 5)]}, committed=2)
    lookup_held = leader.holds[OFFSET_FETCH] = asyncio.Event()
    reset_held = leader.holds[LIST_OFFSETS] = asyncio.Event()
    async with (
        FakeCluster(1, leader) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, group_id="g", **FAST) as consumer,
    ):
        looked_up = asyncio.Event()
        real = consumer._committed

        async def committed(partitions: set[TopicPartition]) -> Any:
            try:
                return await real(partitions)
            finally:
                looked_up.set()  # set as the lookup's answer is applied (in the same step)

        consumer._committed = committed  # type: ignore[method-assign]
        consumer.assign([T0])
        await asyncio.wait_for(leader.asked(OFFSET_FETCH).wait(), WAIT)
        consumer.seek_to_beginning(T0)
        lookup_held.set()
        await asyncio.wait_for(looked_up.wait(), WAIT)
        reset_held.set()
        got = await read(consumer, 3, timeout=WAIT)
    assert [r.offset for r in got][:3] == [0, 1, 2]  # not [2, 3, 4]


async def test_commit_with_nothing_consumed_while_joining_does_nothing() -> None:
    """Java's ``commitSync()`` with no offsets returns at once, in a group or not yet."""
    leader = LogLeader({0: [batch(0, 1)]})  # JoinGroup is never answered
    async with FakeCluster(1, leader) as brokers:
        async with Consumer(
            "t", bootstrap_servers=brokers.bootstrap, group_id="g", **FAST
        ) as consumer:
            while not brokers.requests(1, JOIN_GROUP):
                await asyncio.wait_for(consumer.getmany(timeout_ms=20), WAIT)
            await asyncio.wait_for(consumer.commit(), WAIT)
            await asyncio.wait_for(consumer.commit({}), WAIT)
        assert brokers.requests(1, 8) == []  # no OffsetCommit went
