"""A leader named in a ShareFetch or ShareAcknowledge answer (NOT_LEADER_OR_FOLLOWER with the
current leader and its node endpoint, KIP-951) is fetched from at once, without waiting for a
metadata refresh, as Java's ``ShareConsumeRequestManager`` does with
``Metadata.updatePartitionLeadership``. On the fake fake_cluster (three brokers), counting the
Metadata requests between the answer and the first fetch from the new leader."""

from __future__ import annotations

from typing import Any

from kafkawire.consumer import ShareConsumer, TopicPartition
from kafkawire.errors import NotLeaderOrFollowerError
from kafkawire.testing.fake import FakeCluster

from .helpers import Requests, consume, fake_member, fake_topic
from .scripted import refuse_acks

METADATA, SHARE_FETCH, SHARE_ACKNOWLEDGE = 3, 78, 79


def member(
    fake_cluster: FakeCluster, topic: str, requests: Requests, **options: Any
) -> ShareConsumer:
    return fake_member(
        fake_cluster,
        topic,
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
    fake_cluster: FakeCluster,
) -> None:
    topic = fake_topic(fake_cluster, b"a")
    old, _ = fake_cluster.leader(topic, 0)
    new = (old + 1) % 3
    requests = Requests()
    async with member(fake_cluster, topic, requests) as consumer:
        (first,) = await consume(consumer, 1, answer=consumer.acknowledge)
        assert await consumer.commit() == {TopicPartition(topic, 0): None}
        moved_at = len(requests.sent)
        fake_cluster.move_leader(topic, 0, new)
        fake_cluster.produce(topic, 0, [b"b"])
        (second,) = await consume(consumer, 1, answer=consumer.acknowledge)
        await consumer.commit()
    old_port, new_port = fake_cluster.brokers[old].port, fake_cluster.brokers[new].port
    # The fetch under way as the leader moved, or the next, answered NOT_LEADER_OR_FOLLOWER.
    assert metadata_asked(requests, moved_at - 1, old_port, new_port) == []
    assert (first.value, second.value) == (b"a", b"b")


async def test_an_acknowledge_answer_naming_the_new_leader_moves_the_fetch_there_at_once(
    fake_cluster: FakeCluster,
) -> None:
    """The acknowledgement is not retried (the old leader released the record: Java's rule)
    and fails with NOT_LEADER_OR_FOLLOWER; the next fetch goes to the leader it named."""
    topic = fake_topic(fake_cluster, b"a")
    old, _ = fake_cluster.leader(topic, 0)
    new = (old + 1) % 3
    requests = Requests()
    async with member(fake_cluster, topic, requests, share_acquire_mode="record_limit") as consumer:
        (record,) = await consume(consumer, 1)
        moved_at = len(requests.sent)
        epoch = fake_cluster.move_leader(topic, 0, new)
        script = refuse_acks(fake_cluster, SHARE_ACKNOWLEDGE, 6, times=1, leader=(new, epoch))
        consumer.acknowledge(record)
        results = await consumer.commit()
        (again,) = await consume(consumer, 1, answer=consumer.acknowledge)
        await consumer.commit()
    assert isinstance(results[TopicPartition(topic, 0)], NotLeaderOrFollowerError)
    assert len(script.refused) == 1
    old_port, new_port = fake_cluster.brokers[old].port, fake_cluster.brokers[new].port
    assert metadata_asked(requests, moved_at, old_port, new_port) == []
    assert again.value == b"a"
