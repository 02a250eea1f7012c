"""Acknowledgements refused with a retriable error are sent again until they go or their time
(``default_api_timeout_ms``, Java's commitSync/commitAsync deadline) runs out, as Java's
``ShareConsumeRequestManager`` retries them; a moved leader or a partition the broker does not
have is not retried (the records were released there); what fails reaches ``commit``'s result
and the acknowledgement commit callback, per partition. On the fake fake_cluster, whose hooks refuse
acknowledgements as a broker whose share state could not take them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.cluster import CallTimeoutError
from kafkawire.consumer import ShareConsumer, TopicPartition
from kafkawire.errors import (
    CoordinatorLoadInProgressError,
    KafkawireError,
    NotLeaderOrFollowerError,
    RequestTimedOutError,
    UnknownTopicOrPartitionError,
)
from kafkawire.testing.fake import FakeCluster

from .helpers import Requests, consume, fake_member, fake_topic, fresh
from .scripted import carries_acks, refuse_acks

SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79


def member(fake_cluster: FakeCluster, topic: str, group: str, **options: Any) -> ShareConsumer:
    """Explicit acknowledgements; record_limit fetches only while a poll waits, so an
    acknowledgement made after it goes alone, in a ShareAcknowledge."""
    options = {
        "retry_backoff_ms": 1,
        "retry_backoff_max_ms": 5,
        "share_acknowledgement_mode": "explicit",
        "share_acquire_mode": "record_limit",
        **options,
    }
    return fake_member(fake_cluster, topic, group, **options)


def acknowledged(fake_cluster: FakeCluster, group: str, topic: str, end: int) -> bool:
    share = fake_cluster.share_partition(group, topic, 0)
    return share is not None and share.start_offset >= end


@pytest.mark.parametrize("code", [7, 14])  # REQUEST_TIMED_OUT, COORDINATOR_LOAD_IN_PROGRESS
async def test_a_retriable_refusal_is_retried_until_the_acknowledgement_goes(
    fake_cluster: FakeCluster, code: int
) -> None:
    group = fresh("group")
    topic = fake_topic(fake_cluster, b"a", b"b")
    outcomes: list[KafkawireError | None] = []
    requests = Requests()
    async with member(fake_cluster, topic, group, connect=requests.connect()) as consumer:
        consumer.set_acknowledgement_commit_callback(lambda _, error: outcomes.append(error))
        records = await consume(consumer, 2)
        script = refuse_acks(fake_cluster, SHARE_ACKNOWLEDGE, code, times=2)
        for record in records:
            consumer.acknowledge(record)
        assert await consumer.commit() == {TopicPartition(topic, 0): None}
    assert len(script.refused) == 2
    sent = [r for r in requests.of(SHARE_ACKNOWLEDGE) if carries_acks(r)]
    assert len(sent) == 3  # twice refused, then taken: the same offsets each time
    assert {(b.first_offset, b.last_offset) for r in sent for b in _batches(r)} == {(0, 1)}
    assert outcomes == [None]  # the callback hears the outcome, not the attempts
    assert acknowledged(fake_cluster, group, topic, 2)


async def test_a_refusal_past_the_time_is_one_timeout_naming_the_last_error(
    fake_cluster: FakeCluster,
) -> None:
    group = fresh("group")
    topic = fake_topic(fake_cluster, b"a")
    outcomes: list[KafkawireError | None] = []
    async with member(fake_cluster, topic, group, default_api_timeout_ms=300) as consumer:
        consumer.set_acknowledgement_commit_callback(lambda _, error: outcomes.append(error))
        (record,) = await consume(consumer, 1)
        script = refuse_acks(fake_cluster, SHARE_ACKNOWLEDGE, 7)
        refuse_acks(fake_cluster, SHARE_FETCH, 7)  # a retry may ride the polls' fetches
        consumer.acknowledge(record)
        results = await consumer.commit()
        await until(lambda: bool(outcomes), consumer)  # the callback runs in polls
    error = results[TopicPartition(topic, 0)]
    assert isinstance(error, CallTimeoutError)
    assert str(error).startswith(f"acknowledging records of {topic}/0 to broker ")
    assert "last error: REQUEST_TIMED_OUT (7)" in str(error)
    assert isinstance(error.__cause__, RequestTimedOutError)
    assert len(script.refused) >= 2  # retried
    assert len(outcomes) == 1
    assert isinstance(outcomes[0], CallTimeoutError)
    assert isinstance(outcomes[0].__cause__, RequestTimedOutError)


@pytest.mark.parametrize(
    ("code", "error_type"),
    [(6, NotLeaderOrFollowerError), (3, UnknownTopicOrPartitionError)],
)
async def test_a_moved_or_unknown_partition_is_not_retried(
    fake_cluster: FakeCluster, code: int, error_type: type[KafkawireError]
) -> None:
    """Java's rule: the leader that refused released the records (or never had them), so the
    acknowledgement cannot succeed anywhere; the records come again."""
    group = fresh("group")
    topic = fake_topic(fake_cluster, b"a")
    async with member(fake_cluster, topic, group) as consumer:
        (record,) = await consume(consumer, 1)
        script = refuse_acks(fake_cluster, SHARE_ACKNOWLEDGE, code, times=1)
        consumer.acknowledge(record)
        results = await consumer.commit()
    assert isinstance(results[TopicPartition(topic, 0)], error_type)
    assert len(script.refused) == 1


async def test_acknowledgements_that_rode_a_fetch_are_retried_too(
    fake_cluster: FakeCluster,
) -> None:
    """kafkawire picks the request an acknowledgement goes in (Java's commitSync always sends
    a ShareAcknowledge, which it retries): a refusal in a ShareFetch answer is retried alike."""
    group = fresh("group")
    topic = fake_topic(fake_cluster, b"a")
    script = refuse_acks(fake_cluster, SHARE_FETCH, 14, times=1)
    async with member(
        fake_cluster,
        topic,
        group,
        share_acknowledgement_mode="implicit",
        share_acquire_mode="batch_optimized",
    ) as consumer:
        await consume(consumer, 1)
        await consumer.getmany(timeout_ms=0)  # accepts it: the acknowledgement rides a fetch

        await until(lambda: bool(script.refused), consumer)
        results = await consumer.commit()
    assert results in ({}, {TopicPartition(topic, 0): None})
    assert acknowledged(fake_cluster, group, topic, 1)


async def until(condition: Callable[[], bool], consumer: ShareConsumer) -> None:
    """Poll ``consumer`` until ``condition`` holds (or fail: a test must not hang)."""

    async def poll() -> None:
        while not condition():
            await consumer.getmany(timeout_ms=20)

    await asyncio.wait_for(poll(), 20)


def _batches(request: Any) -> list[Any]:
    return [b for t in request.topics for p in t.partitions for b in p.acknowledgement_batches]


def test_the_errors_retried_are_the_retriable_ones_but_a_moved_or_unknown_partition() -> None:
    from kafkawire.consumer.share.holdings import retried_ack_error

    assert retried_ack_error(RequestTimedOutError("x"))
    assert retried_ack_error(CoordinatorLoadInProgressError("x"))
    assert not retried_ack_error(NotLeaderOrFollowerError("x"))
    assert not retried_ack_error(UnknownTopicOrPartitionError("x"))
    assert not retried_ack_error(KafkawireError("x"))
