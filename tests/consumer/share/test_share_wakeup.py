"""``ShareConsumer.wakeup()``, as Java's ``KafkaShareConsumer.wakeup()``: the poll under way,
or else the next one, raises :class:`WakeupError` once; a ``commit`` waiting for its
acknowledgements does too; it may be called from any thread; nothing is lost by it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kafkawire.consumer import ShareConsumer, TopicPartition, WakeupError
from kafkawire.testing.fake import FakeCluster

from .helpers import ShareMock, consume, fresh

SHARE_ACKNOWLEDGE = 79
WAIT = 20.0  # a bound on each wait, never reached when a test passes


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    async with FakeCluster(share_group_heartbeat_interval_ms=50) as cluster:
        yield cluster


def member(cluster: FakeCluster, topic: str, **options: Any) -> ShareConsumer:
    group = fresh("group")
    cluster.set_group_config(group, "share.auto.offset.reset", "earliest")
    options = {"fetch_max_wait_ms": 50, **options}
    return ShareConsumer(topic, bootstrap_servers=cluster.bootstrap, group_id=group, **options)


async def waiting(consumer: ShareConsumer) -> None:
    """Until a poll of ``consumer`` waits for records."""
    async with asyncio.timeout(WAIT):
        while not consumer._fetcher.demand:
            await asyncio.sleep(0.001)


async def test_wakeup_ends_the_poll_waiting_once(cluster: FakeCluster) -> None:
    topic = fresh("topic")
    cluster.create_topic(topic, partitions=1)
    async with member(cluster, topic) as consumer:
        poll = asyncio.ensure_future(consumer.getmany(timeout_ms=600_000))
        await waiting(consumer)
        consumer.wakeup()
        with pytest.raises(WakeupError, match="wakeup"):
            await asyncio.wait_for(poll, WAIT)
        assert await consumer.getmany(timeout_ms=0) == {}  # raised once only


async def test_a_wakeup_with_no_poll_waiting_is_raised_by_the_next_and_loses_nothing(
    cluster: FakeCluster,
) -> None:
    topic = fresh("topic")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"a"])
    async with member(cluster, topic) as consumer:
        consumer.wakeup()
        consumer.wakeup()  # still one
        with pytest.raises(WakeupError):
            await consumer.getmany(timeout_ms=0)
        (record,) = await consume(consumer, 1)
        await consumer.commit()
    assert record.value == b"a"


async def test_iteration_raises_the_wakeup(cluster: FakeCluster) -> None:
    topic = fresh("topic")
    cluster.create_topic(topic, partitions=1)
    async with member(cluster, topic) as consumer:
        consumer.wakeup()
        with pytest.raises(WakeupError):
            await anext(consumer)


async def test_wakeup_from_another_thread_ends_the_poll(cluster: FakeCluster) -> None:
    topic = fresh("topic")
    cluster.create_topic(topic, partitions=1)
    async with member(cluster, topic) as consumer:
        poll = asyncio.ensure_future(consumer.getmany(timeout_ms=600_000))
        await waiting(consumer)
        thread = threading.Thread(target=consumer.wakeup)
        thread.start()
        thread.join()
        with pytest.raises(WakeupError):
            await asyncio.wait_for(poll, WAIT)


async def test_wakeup_ends_a_commit_waiting_and_the_acknowledgements_still_go(
    cluster: FakeCluster,
) -> None:
    topic = fresh("topic")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"a"])
    held, release = asyncio.Event(), asyncio.Event()

    async def hold(request: Any, ctx: Any) -> None:
        held.set()
        await release.wait()

    outcomes: list[object] = []
    async with member(
        cluster, topic, share_acknowledgement_mode="explicit", share_acquire_mode="record_limit"
    ) as consumer:
        consumer.set_acknowledgement_commit_callback(lambda _, error: outcomes.append(error))
        (record,) = await consume(consumer, 1)
        cluster.control(hold, api_key=SHARE_ACKNOWLEDGE)
        consumer.acknowledge(record)
        commit = asyncio.ensure_future(consumer.commit())
        await asyncio.wait_for(held.wait(), WAIT)
        consumer.wakeup()
        with pytest.raises(WakeupError):
            await asyncio.wait_for(commit, WAIT)
        release.set()
        assert await consumer.commit() == {TopicPartition(topic, 0): None}
    assert outcomes == [None]


async def test_wakeup_before_start_and_after_close_is_harmless(cluster: FakeCluster) -> None:
    topic = fresh("topic")
    cluster.create_topic(topic, partitions=1)
    consumer = member(cluster, topic)
    consumer.wakeup()
    async with consumer:
        with pytest.raises(WakeupError):
            await consumer.getmany(timeout_ms=0)
    consumer.wakeup()  # closed: nothing to wake, nothing raised


async def test_wakeup_ends_a_poll_on_the_mock(share_mock: ShareMock) -> None:
    topic, group = fresh("topic"), fresh("group")
    async with share_mock.member(topic, group) as consumer:
        poll = asyncio.ensure_future(consumer.getmany(timeout_ms=600_000))
        await waiting(consumer)
        consumer.wakeup()
        with pytest.raises(WakeupError):
            await asyncio.wait_for(poll, WAIT)
