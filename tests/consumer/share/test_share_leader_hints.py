"""A leader named in a ShareFetch or ShareAcknowledge answer (NOT_LEADER_OR_FOLLOWER with the
current leader and its node endpoint, KIP-951) is fetched from at once, without waiting for a
metadata refresh, as Java's ``ShareConsumeRequestManager`` does with
``Metadata.updatePartitionLeadership``. On the fake cluster (three brokers), counting the
Metadata requests between the answer and the first fetch from the new leader."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from kafkawire.consumer import ShareConsumer, TopicPartition
from kafkawire.errors import NotLeaderOrFollowerError
from kafkawire.testing.fake import FakeCluster

from .helpers import Requests, consume, fresh
from .scripted import refuse_acks

METADATA, SHARE_FETCH, SHARE_ACKNOWLEDGE = 3, 78, 79


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    async with FakeCluster(share_group_heartbeat_interval_ms=50) as cluster:
        yield cluster


def member(cluster: FakeCluster, topic: str, requests: Requests, **options: Any) -> ShareConsumer:
    group = fresh("group")
    cluster.set_group_config(group, "share.auto.offset.reset", "earliest")
    return ShareConsumer(
        topic,
        bootstrap_servers=cluster.bootstrap,
        group_id=group,
        fetch_max_wait_ms=50,
        share_acknowledgement_mode="explicit",
        connect=requests.connect(),
        **options,
    )


def metadata_asked(requests: Requests, since: int, old: int, new: int) -> list[Any]:
    """The Metadata requests sent between the last request to port ``old`` that the consumer
    heard of the move from (a ShareFetch or ShareAcknowledge after request ``since``) and the
    first ShareFetch to port ``new`` after it."""
    sent = requests.sent
    first_new = next(
        i
        for i, (port, r) in enumerate(sent)
        if i >= since and port == new and r.__api_key__ == SHARE_FETCH
    )
    told = max(
        i
        for i, (port, r) in enumerate(sent[:first_new])
        if i >= since and port == old and r.__api_key__ in (SHARE_FETCH, SHARE_ACKNOWLEDGE)
    )
    return [r for _, r in sent[told + 1 : first_new] if r.__api_key__ == METADATA]


async def test_a_fetch_answer_naming_the_new_leader_moves_the_fetch_there_at_once(
    cluster: FakeCluster,
) -> None:
    topic = fresh("topic")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"a"])
    old, _ = cluster.leader(topic, 0)
    new = (old + 1) % 3
    requests = Requests()
    async with member(cluster, topic, requests) as consumer:
        (first,) = await consume(consumer, 1, answer=consumer.acknowledge)
        assert await consumer.commit() == {TopicPartition(topic, 0): None}
        moved_at = len(requests.sent)
        cluster.move_leader(topic, 0, new)
        cluster.produce(topic, 0, [b"b"])
        (second,) = await consume(consumer, 1, answer=consumer.acknowledge)
        await consumer.commit()
    old_port, new_port = cluster.brokers[old].port, cluster.brokers[new].port
    # The fetch under way as the leader moved, or the next, answered NOT_LEADER_OR_FOLLOWER.
    assert metadata_asked(requests, moved_at - 1, old_port, new_port) == []
    assert (first.value, second.value) == (b"a", b"b")


async def test_an_acknowledge_answer_naming_the_new_leader_moves_the_fetch_there_at_once(
    cluster: FakeCluster,
) -> None:
    """The acknowledgement is not retried (the old leader released the record: Java's rule)
    and fails with NOT_LEADER_OR_FOLLOWER; the next fetch goes to the leader it named."""
    topic = fresh("topic")
    cluster.create_topic(topic, partitions=1)
    cluster.produce(topic, 0, [b"a"])
    old, _ = cluster.leader(topic, 0)
    new = (old + 1) % 3
    requests = Requests()
    async with member(cluster, topic, requests, share_acquire_mode="record_limit") as consumer:
        (record,) = await consume(consumer, 1)
        moved_at = len(requests.sent)
        epoch = cluster.move_leader(topic, 0, new)
        script = refuse_acks(cluster, SHARE_ACKNOWLEDGE, 6, times=1, leader=(new, epoch))
        consumer.acknowledge(record)
        results = await consumer.commit()
        (again,) = await consume(consumer, 1, answer=consumer.acknowledge)
        await consumer.commit()
    assert isinstance(results[TopicPartition(topic, 0)], NotLeaderOrFollowerError)
    assert len(script.refused) == 1
    old_port, new_port = cluster.brokers[old].port, cluster.brokers[new].port
    assert metadata_asked(requests, moved_at, old_port, new_port) == []
    assert again.value == b"a"
