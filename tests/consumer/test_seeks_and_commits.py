"""Seeks racing the consumer's own positioning, and commits with nothing to commit, on the fake
cluster (its hooks hold the answers the race needs held)."""

from __future__ import annotations

import asyncio
from typing import Any

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.testing.fake import DROP, FakeCluster, HookContext
from kafkawire.testing.fake.faults import hold

from .helpers import read

T0 = TopicPartition("t", 0)
FAST: dict[str, Any] = {"retry_backoff_ms": 1, "fetch_max_wait_ms": 20}
WAIT = 10  # the bound on every wait: a test must fail, not hang


def seven_records(cluster: FakeCluster) -> None:
    """Topic ``t``, its one partition holding offsets 0-6 in two batches."""
    cluster.create_topic("t")
    cluster.produce("t", 0, [b"%d" % o for o in range(3)])
    cluster.produce("t", 0, [b"%d" % o for o in range(3, 7)])


async def test_a_seek_to_the_beginning_while_the_fetcher_awaits_metadata(
    fake_cluster: FakeCluster,
) -> None:
    """The fetcher planned to fetch from offset 5 and asked for metadata; the application seeks
    to the beginning meanwhile: the partition has no position when the answer comes."""
    seven_records(fake_cluster)
    release = asyncio.Event()
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap, **FAST) as consumer:
        asked = len(fake_cluster.requests.of("Metadata"))
        fake_cluster.control(hold(release.wait), api_key="Metadata")
        consumer._cluster.mark_metadata_stale()  # the fetcher's plan asks for metadata
        consumer.assign([T0])
        consumer.seek(T0, 5)
        await fake_cluster.requests.wait_for("Metadata", asked + 1, timeout=WAIT)
        consumer.seek_to_beginning(T0)
        release.set()
        got = await read(consumer, 7, timeout=WAIT)
    assert [r.offset for r in got] == list(range(7))


async def test_a_seek_made_after_assign_is_not_overwritten_by_the_committed_offset(
    fake_cluster: FakeCluster,
) -> None:
    """The committed offset (2) arrives after the application seeked to the beginning, before
    that reset is applied: the application's choice stands."""
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, [b"%d" % o for o in range(5)])
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap, group_id="g") as committer:
        await committer.commit({T0: 2})
    lookup_held, reset_held = asyncio.Event(), asyncio.Event()
    fake_cluster.control(hold(lookup_held.wait), api_key="OffsetFetch")
    fake_cluster.control(hold(reset_held.wait), api_key="ListOffsets")
    fake_cluster.requests.clear()
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap, group_id="g", **FAST) as consumer:
        looked_up = asyncio.Event()
        real = consumer._committed

        async def committed(partitions: set[TopicPartition]) -> Any:
            try:
                return await real(partitions)
            finally:
                looked_up.set()  # set as the lookup's answer is applied (in the same step)

        consumer._committed = committed  # type: ignore[method-assign]
        consumer.assign([T0])
        await fake_cluster.requests.wait_for("OffsetFetch", timeout=WAIT)
        consumer.seek_to_beginning(T0)
        lookup_held.set()
        await asyncio.wait_for(looked_up.wait(), WAIT)
        reset_held.set()
        got = await read(consumer, 3, timeout=WAIT)
    assert [r.offset for r in got][:3] == [0, 1, 2]  # not [2, 3, 4]


async def test_commit_with_nothing_consumed_while_joining_does_nothing(
    fake_cluster: FakeCluster,
) -> None:
    """Java's ``commitSync()`` with no offsets returns at once, in a group or not yet."""
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, [b"0"])

    def never(request: Any, ctx: HookContext) -> Any:
        return DROP  # the group never forms

    fake_cluster.control(never, api_key="JoinGroup", keep=True)
    async with Consumer(
        "t", bootstrap_servers=fake_cluster.bootstrap, group_id="g", **FAST
    ) as consumer:
        while not fake_cluster.requests.of("JoinGroup"):
            await asyncio.wait_for(consumer.getmany(timeout_ms=20), WAIT)
        await asyncio.wait_for(consumer.commit(), WAIT)
        await asyncio.wait_for(consumer.commit({}), WAIT)
    assert fake_cluster.requests.of("OffsetCommit") == []  # no OffsetCommit went
