"""``ShareConsumer.wakeup()``, as Java's ``KafkaShareConsumer.wakeup()``: the poll under way,
or else the next one, raises :class:`WakeupError` once; a ``commit`` waiting for its
acknowledgements does too; it may be called from any thread; nothing is lost by it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.consumer import ShareConsumer, TopicPartition, WakeupError
from kafkawire.testing.fake import FakeCluster

from .helpers import ShareMock, consume, fake_member, fake_topic, fresh

SHARE_ACKNOWLEDGE = 79
WAIT = 20.0  # a bound on each wait, never reached when a test passes


async def woken_poll(consumer: ShareConsumer, wake: Callable[[], None]) -> None:
    """A long ``getmany``, woken by ``wake()`` once it waits for records: it raises."""
    poll = asyncio.ensure_future(consumer.getmany(timeout_ms=600_000))
    async with asyncio.timeout(WAIT):
        while not consumer._fetcher.demand:  # a poll waits for records
            await asyncio.sleep(0.001)
    wake()
    with pytest.raises(WakeupError, match="getmany was ended by wakeup"):
        await asyncio.wait_for(poll, WAIT)


async def test_wakeup_ends_the_poll_waiting_once(fake_cluster: FakeCluster) -> None:
    async with fake_member(fake_cluster, fake_topic(fake_cluster)) as consumer:
        await woken_poll(consumer, consumer.wakeup)
        assert await consumer.getmany(timeout_ms=0) == {}  # raised once only


async def test_a_wakeup_with_no_poll_waiting_is_raised_by_the_next_and_loses_nothing(
    fake_cluster: FakeCluster,
) -> None:
    async with fake_member(fake_cluster, fake_topic(fake_cluster, b"a")) as consumer:
        consumer.wakeup()
        consumer.wakeup()  # still one
        with pytest.raises(WakeupError):
            await consumer.getmany(timeout_ms=0)
        (record,) = await consume(consumer, 1)
        await consumer.commit()
    assert record.value == b"a"


async def test_iteration_raises_the_wakeup(fake_cluster: FakeCluster) -> None:
    async with fake_member(fake_cluster, fake_topic(fake_cluster)) as consumer:
        consumer.wakeup()
        with pytest.raises(WakeupError):
            await anext(consumer)


async def test_wakeup_from_another_thread_ends_the_poll(fake_cluster: FakeCluster) -> None:
    def from_a_thread(consumer: ShareConsumer) -> None:
        thread = threading.Thread(target=consumer.wakeup)
        thread.start()
        thread.join()

    async with fake_member(fake_cluster, fake_topic(fake_cluster)) as consumer:
        await woken_poll(consumer, lambda: from_a_thread(consumer))


async def test_wakeup_ends_a_commit_waiting_and_the_acknowledgements_still_go(
    fake_cluster: FakeCluster,
) -> None:
    held, release = asyncio.Event(), asyncio.Event()

    async def hold(request: Any, ctx: Any) -> None:
        held.set()
        await release.wait()

    outcomes: list[object] = []
    topic = fake_topic(fake_cluster, b"a")
    async with fake_member(
        fake_cluster,
        topic,
        share_acknowledgement_mode="explicit",
        share_acquire_mode="record_limit",  # no fetch after it: the ack goes alone
    ) as consumer:
        consumer.set_acknowledgement_commit_callback(lambda _, error: outcomes.append(error))
        (record,) = await consume(consumer, 1)
        fake_cluster.control(hold, api_key=SHARE_ACKNOWLEDGE)
        consumer.acknowledge(record)
        commit = asyncio.ensure_future(consumer.commit())
        await asyncio.wait_for(held.wait(), WAIT)
        consumer.wakeup()
        with pytest.raises(WakeupError, match="commit was ended by wakeup"):
            await asyncio.wait_for(commit, WAIT)
        release.set()
        assert await consumer.commit() == {TopicPartition(topic, 0): None}
    assert outcomes == [None]


async def test_wakeup_before_start_and_after_close_is_harmless(fake_cluster: FakeCluster) -> None:
    consumer = fake_member(fake_cluster, fake_topic(fake_cluster))
    consumer.wakeup()
    async with consumer:
        with pytest.raises(WakeupError):
            await consumer.getmany(timeout_ms=0)
    consumer.wakeup()  # closed: nothing to wake, nothing raised


async def test_wakeup_ends_a_poll_on_the_mock(share_mock: ShareMock) -> None:
    async with share_mock.member(fresh("topic"), fresh("group")) as consumer:
        await woken_poll(consumer, consumer.wakeup)
