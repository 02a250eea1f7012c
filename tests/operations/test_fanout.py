"""The per-leader fan-out on the fake cluster: one request per leader, each partition's own
result, and the partitions whose leader moved (or whose connection was cut) asked again."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kafkawire.cluster import Backoff, Cluster, RequestRefusedError, TopicPartition
from kafkawire.errors import (
    NotLeaderOrFollowerError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from kafkawire.net.errors import RequestTimeoutError
from kafkawire.operations.fanout import retriable_for_known_topics
from kafkawire.operations.list_offsets import (
    EARLIEST,
    LATEST,
    ListedOffset,
    end_offsets,
    list_offsets,
)
from kafkawire.testing.fake import CUT, DROP, Error, FakeCluster, HookContext
from tests.fake.late_topic import LateTopic

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))
FAST = Backoff(initial=0.001, maximum=0.002)


@pytest.fixture
async def cluster(fake_cluster: FakeCluster) -> AsyncIterator[Cluster]:
    """Topic ``t``: three partitions led by brokers 0, 1, 2, with 2, 3 and 4 records."""
    fake_cluster.create_topic("t", 3)
    for partition in range(3):
        fake_cluster.produce("t", partition, [b"r"] * (partition + 2))
    async with Cluster(fake_cluster.bootstrap, backoff=FAST, retry_timeout=5.0) as cluster:
        yield cluster


def failing(partition: int, code: int) -> Any:
    """A ListOffsets hook: the handler's answer, with ``partition`` of ``t`` failing with
    ``code``."""

    async def hook(request: Any, ctx: HookContext) -> Any:
        answer = await ctx.handle()
        topics = tuple(
            dataclasses.replace(
                topic,
                partitions=tuple(
                    dataclasses.replace(p, error_code=code, offset=-1)
                    if (topic.name, p.partition_index) == ("t", partition)
                    else p
                    for p in topic.partitions
                ),
            )
            for topic in answer.topics
        )
        return dataclasses.replace(answer, topics=topics)

    return hook


def asked(fake_cluster: FakeCluster, api: str) -> list[tuple[int, list[tuple[str, int]]]]:
    """Each request of ``api`` the fake received: its broker and the partitions it named."""
    return [
        (r.node_id, [(t.name, p.partition_index) for t in r.request.topics for p in t.partitions])
        for r in fake_cluster.requests.of(api)
    ]


async def test_one_request_per_leader_each_partition_its_answer(
    fake_cluster: FakeCluster, cluster: Cluster
) -> None:
    fake_cluster.move_leader("t", 2, 1)  # brokers 0 and 1 lead: two requests
    await cluster.refresh_metadata(["t"])
    found = await list_offsets(cluster, {T0: LATEST, T1: LATEST, T2: EARLIEST})
    assert found == {
        T0: ListedOffset(2, -1, 0),
        T1: ListedOffset(3, -1, 0),
        T2: ListedOffset(0, -1, 0),  # the epoch of the first record
    }
    assert sorted(asked(fake_cluster, "ListOffsets")) == [
        (0, [("t", 0)]),
        (1, [("t", 1), ("t", 2)]),
    ]


async def test_a_leader_that_moves_mid_call_is_asked_again_after_a_refresh(
    fake_cluster: FakeCluster, cluster: Cluster
) -> None:
    fake_cluster.move_leader("t", 1, 0)  # broker 0 leads partitions 0 and 1
    await cluster.refresh_metadata(["t"])

    async def moved(request: Any, ctx: HookContext) -> Any:
        answer = await failing(0, Error.NOT_LEADER_OR_FOLLOWER)(request, ctx)
        ctx.cluster.move_leader("t", 0, 2)  # the leader moved while it answered
        return answer

    fake_cluster.control(moved, api_key="ListOffsets")
    metadata_before = len(fake_cluster.requests.of("Metadata"))
    found = await list_offsets(cluster, {T0: LATEST, T1: LATEST})
    assert found[T0].offset == 2  # type: ignore[union-attr]
    assert found[T1].offset == 3  # type: ignore[union-attr]
    # Partition 1 was answered the first time; only partition 0 went again, to its new
    # leader, after the metadata was asked again.
    assert asked(fake_cluster, "ListOffsets") == [(0, [("t", 0), ("t", 1)]), (2, [("t", 0)])]
    assert len(fake_cluster.requests.of("Metadata")) == metadata_before + 1


async def test_a_partition_error_stays_while_the_others_succeed(
    fake_cluster: FakeCluster, cluster: Cluster
) -> None:
    fake_cluster.move_leader("t", 1, 0)
    await cluster.refresh_metadata(["t"])
    fake_cluster.control(failing(0, TopicAuthorizationFailedError.code), api_key="ListOffsets")
    found = await list_offsets(cluster, {T0: LATEST, T1: LATEST, T2: LATEST})
    assert isinstance(found[T0], TopicAuthorizationFailedError)
    assert "t/0" in str(found[T0])
    assert (found[T1], found[T2]) == (ListedOffset(3, -1, 1), ListedOffset(4, -1, 0))
    assert len(fake_cluster.requests.of("ListOffsets")) == 2  # not asked again


async def test_without_a_retry_policy_a_moved_leader_is_the_partitions_error(
    fake_cluster: FakeCluster, cluster: Cluster
) -> None:
    fake_cluster.control(failing(0, Error.NOT_LEADER_OR_FOLLOWER), api_key="ListOffsets")
    found = await list_offsets(cluster, {T0: LATEST}, retry=None)
    assert isinstance(found[T0], NotLeaderOrFollowerError)
    assert len(fake_cluster.requests.of("ListOffsets")) == 1


async def test_a_cut_connection_is_asked_again(fake_cluster: FakeCluster, cluster: Cluster) -> None:
    fake_cluster.control(lambda request, ctx: CUT, api_key="ListOffsets")
    found = await list_offsets(cluster, {T0: LATEST, T1: LATEST})
    assert (found[T0], found[T1]) == (ListedOffset(2, -1, 0), ListedOffset(3, -1, 0))
    assert len(fake_cluster.requests.of("ListOffsets")) == 3  # one cut, then one per leader


async def test_a_broker_that_cuts_every_time_refuses_its_partitions_only(
    fake_cluster: FakeCluster, cluster: Cluster
) -> None:
    def cut_on_broker_0(request: Any, ctx: HookContext) -> Any:
        return CUT if ctx.node_id == 0 else None

    fake_cluster.control(cut_on_broker_0, api_key="ListOffsets", keep=True)
    found = await list_offsets(cluster, {T0: LATEST, T1: LATEST})
    assert isinstance(found[T0], RequestRefusedError)
    assert found[T1] == ListedOffset(3, -1, 0)


async def test_a_lost_answer_is_its_partitions_timeout_at_the_deadline(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t", 2)
    fake_cluster.control(
        lambda request, ctx: DROP if ctx.node_id == 0 else None, api_key="ListOffsets", keep=True
    )
    # The deadline leaves the answered partition's leader time to connect on a loaded machine
    # (0.3 s did not, once); the dropped one times out at it however long it is.
    async with Cluster(
        fake_cluster.bootstrap, backoff=FAST, request_timeout=0.1, retry_timeout=1.0
    ) as cluster:
        found = await list_offsets(cluster, {T0: LATEST, T1: LATEST})
    assert isinstance(found[T0], RequestTimeoutError)
    assert found[T1] == ListedOffset(0, -1, 0)


async def test_an_unknown_topic_waits_or_is_answered_at_once_by_policy(
    fake_cluster: FakeCluster, cluster: Cluster
) -> None:
    unknown = TopicPartition("no-such-topic", 0)
    metadata_before = len(fake_cluster.requests.of("Metadata"))
    found = await list_offsets(
        cluster, {unknown: LATEST, T0: LATEST}, retry=retriable_for_known_topics
    )
    assert isinstance(found[unknown], UnknownTopicOrPartitionError)
    assert found[T0] == ListedOffset(2, -1, 0)
    assert len(fake_cluster.requests.of("Metadata")) == metadata_before + 1  # looked for once

    # By default it waits, asking again (counted, not timed: tests/fake/late_topic.py); a topic
    # that never comes is named at the deadline.
    late = LateTopic(fake_cluster, "late")
    found = await list_offsets(cluster, {TopicPartition("late", 0): LATEST})
    assert found[TopicPartition("late", 0)] == ListedOffset(0, -1, 0)
    assert late.asked >= late.after
    async with Cluster(fake_cluster.bootstrap, backoff=FAST, retry_timeout=0.2) as waiting:
        found = await list_offsets(waiting, {unknown: LATEST})
    assert isinstance(found[unknown], UnknownTopicOrPartitionError)


async def test_end_offsets_are_confirmed_by_the_high_watermark(
    fake_cluster: FakeCluster, cluster: Cluster
) -> None:
    fake_cluster.produce("t", 1, [b"a", b"b", b"c"])  # 3 + 3 records: the end is 6

    async def like_tansu(request: Any, ctx: HookContext) -> Any:
        # Tansu 0.6.0's "latest": the last batch's base offset + 1.
        answer = await ctx.handle()
        topics = tuple(
            dataclasses.replace(
                t, partitions=tuple(dataclasses.replace(p, offset=4) for p in t.partitions)
            )
            for t in answer.topics
        )
        return dataclasses.replace(answer, topics=topics)

    fake_cluster.control(like_tansu, api_key="ListOffsets", keep=True)
    assert await end_offsets(cluster, [T1]) == {T1: 6}
    assert [r.node_id for r in fake_cluster.requests.of("Fetch")] == [1]
