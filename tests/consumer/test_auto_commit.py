"""Auto-commit from the application's poll (Kafka's Java rule), on the embedded Tansu: what a
poll handed out is committed by a later poll, never while the application processes it."""

from __future__ import annotations

import asyncio
import time

import pytest

from kafkawire.consumer import Consumer, OffsetAndMetadata, TopicPartition
from kafkawire.testing.pytest_plugin import Broker

from .helpers import fresh_group, fresh_topic, member, produce, read

pytestmark = pytest.mark.asyncio(loop_scope="session")

INTERVAL_MS = 100


async def _committed_soon(consumer: Consumer, tp: TopicPartition, offset: int) -> None:
    """Wait (a little) for the auto-commit the last poll sent to be the committed offset."""
    deadline = time.monotonic() + 10
    while await consumer.committed(tp) != OffsetAndMetadata(offset):
        assert time.monotonic() < deadline, f"{tp} was not committed at {offset}"
        await asyncio.sleep(0.05)


async def test_a_batch_is_committed_by_the_next_poll_not_while_it_is_processed(
    tansu_broker: Broker,
) -> None:
    topic = await fresh_topic(tansu_broker)
    tp = TopicPartition(topic, 0)
    await produce(tansu_broker, topic, [b"%d" % i for i in range(30)])
    consumer = member(
        tansu_broker,
        topic,
        fresh_group("auto-commit"),
        auto_commit_interval_ms=INTERVAL_MS,
        max_poll_records=10,
    )
    async with consumer:
        first = await read(consumer, 10)
        assert [r.offset for r in first] == list(range(10))
        # The application processes its batch for several intervals: nothing of it is
        # committed meanwhile (a background timer would commit offset 10 now).
        await asyncio.sleep(INTERVAL_MS * 4 / 1000)
        before = await consumer.committed(tp)
        assert before is None or before.offset < 10
        second = await consumer.getmany(timeout_ms=5000)  # the next poll commits the first
        assert [r.offset for r in second[tp]] == list(range(10, 20))
        await _committed_soon(consumer, tp, 10)


async def test_iteration_commits_records_once_the_next_one_is_asked_for(
    tansu_broker: Broker,
) -> None:
    topic = await fresh_topic(tansu_broker)
    tp = TopicPartition(topic, 0)
    await produce(tansu_broker, topic, [b"%d" % i for i in range(5)])
    consumer = member(
        tansu_broker, topic, fresh_group("auto-commit-iter"), auto_commit_interval_ms=INTERVAL_MS
    )
    async with consumer:
        records = aiter(consumer)
        record = await asyncio.wait_for(anext(records), 20)
        assert record.offset == 0
        await asyncio.sleep(INTERVAL_MS * 4 / 1000)  # processing record 0
        before = await consumer.committed(tp)
        assert before is None or before.offset == 0  # record 0 is not committed as done
        record = await asyncio.wait_for(anext(records), 20)  # record 0 is done now
        assert record.offset == 1
        await _committed_soon(consumer, tp, 1)
