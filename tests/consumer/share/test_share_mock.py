"""The share consumer against librdkafka's mock cluster (ShareGroupHeartbeat, ShareFetch and
ShareAcknowledge v1): delivery, acknowledgement in both modes, commits and their callback, a
pool of members, deserializer failures, and share sessions the broker drops."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from kafkawire.client import KafkaClient
from kafkawire.consumer import (
    AcknowledgeType,
    ConsumerRecord,
    ConsumerStateError,
    ShareConsumer,
    ShareRecordDeserializationError,
    ShareSessionEndedError,
    TopicPartition,
    UnsupportedGroupProtocolError,
)
from kafkawire.errors import KafkawireError, ShareSessionNotFoundError, UnsupportedVersionError
from kafkawire.net import Connection
from kafkawire.producer import Producer
from kafkawire.testing.pytest_plugin import Broker

from .helpers import Requests, ShareMock, consume, fresh

SHARE_FETCH, SHARE_ACKNOWLEDGE = 78, 79


async def test_implicit_mode_delivers_each_record_once_and_commit_accepts_the_last_batch(
    share_mock: ShareMock,
) -> None:
    topic, group = fresh("topic"), fresh("group")
    for p in range(4):
        await share_mock.write(topic, [b"%d-%d" % (p, i) for i in range(15)], partition=p)
    async with share_mock.member(topic, group) as consumer:
        got = await consume(consumer, 60)
        assert await consumer.commit()  # the last batch, accepted
    assert Counter((r.partition, r.offset) for r in got) == Counter(
        {(p, o): 1 for p in range(4) for o in range(15)}
    )
    assert {r.delivery_count for r in got} == {1}
    # Everything was accepted: a new member of the group gets only what is written next.
    await share_mock.write(topic, [b"after"], partition=2)
    async with share_mock.member(topic, group) as consumer:
        (record,) = await consume(consumer, 1)
    assert (record.partition, record.value, record.delivery_count) == (2, b"after", 1)


async def test_close_releases_what_implicit_mode_did_not_accept(share_mock: ShareMock) -> None:
    topic, group = fresh("topic"), fresh("group")
    await share_mock.write(topic, [b"a", b"b", b"c"])
    async with share_mock.member(topic, group) as consumer:
        first = await consume(consumer, 3)
    assert {r.delivery_count for r in first} == {1}
    # Java's close: what was not acknowledged is released, and delivered again (counted).
    async with share_mock.member(topic, group) as consumer:
        again = await consume(consumer, 3)
        await consumer.commit()
    assert [(r.offset, r.delivery_count) for r in again] == [(0, 2), (1, 2), (2, 2)]


async def test_explicit_acknowledgements_accept_release_and_reject(share_mock: ShareMock) -> None:
    topic, group = fresh("topic"), fresh("group")
    await share_mock.write(topic, [b"accept", b"release", b"reject"])
    kinds = {
        b"accept": AcknowledgeType.ACCEPT,
        b"release": AcknowledgeType.RELEASE,
        b"reject": AcknowledgeType.REJECT,
    }
    outcomes: list[tuple[dict[TopicPartition, set[int]], KafkawireError | None]] = []
    async with share_mock.member(topic, group, share_acknowledgement_mode="explicit") as consumer:
        consumer.set_acknowledgement_commit_callback(lambda o, e: outcomes.append((o, e)))
        first = await consume(consumer, 3, answer=lambda r: consumer.acknowledge(r, kinds[r.value]))
        await consumer.commit()  # every acknowledgement made so far is settled after it
        heard = list(outcomes)
        (again,) = await consume(consumer, 1, answer=consumer.acknowledge)
        await consumer.commit()
    assert [r.value for r in first] == [b"accept", b"release", b"reject"]
    # Only the released record comes back, counted; the rejected one is archived.
    assert (again.value, again.delivery_count) == (b"release", 2)
    assert {o for offsets, _ in heard for o in offsets[TopicPartition(topic, 0)]} == {0, 1, 2}
    assert {error for _, error in heard} == {None}
    assert outcomes[-1] == ({TopicPartition(topic, 0): {1}}, None)


async def test_explicit_mode_wants_every_record_acknowledged_before_the_next_getmany(
    share_mock: ShareMock,
) -> None:
    topic, group = fresh("topic"), fresh("group")
    await share_mock.write(topic, [b"a", b"b"])
    async with share_mock.member(topic, group, share_acknowledgement_mode="explicit") as consumer:
        got = await consume(consumer, 1)
        with pytest.raises(ConsumerStateError, match=r"not acknowledged \(the first: .*/0 at"):
            await consumer.getmany()
        for record in got:
            consumer.acknowledge(record)
        with pytest.raises(ConsumerStateError, match="not waiting to be acknowledged"):
            consumer.acknowledge(got[0])
        rest = await consume(consumer, 2 - len(got), answer=consumer.acknowledge)
        assert [r.value for r in got + rest] == [b"a", b"b"]


async def test_acknowledge_needs_explicit_mode(share_mock: ShareMock) -> None:
    topic = fresh("topic")
    await share_mock.write(topic, [b"a"])
    async with share_mock.member(topic, fresh("group")) as consumer:
        (record,) = await consume(consumer, 1)
        with pytest.raises(ConsumerStateError, match="share_acknowledgement_mode='explicit'"):
            consumer.acknowledge(record)


async def test_a_pool_of_members_shares_the_partitions_and_reads_each_record_once(
    share_mock: ShareMock,
) -> None:
    topic, group = fresh("topic"), fresh("group")
    for p in range(4):
        await share_mock.write(topic, [b"%d" % i for i in range(25)], partition=p)
    got: list[ConsumerRecord] = []
    done = asyncio.Event()

    async def worker(consumer: ShareConsumer) -> None:
        while not done.is_set():
            for records in (await consumer.getmany(timeout_ms=100)).values():
                got.extend(records)
            if len(got) >= 100:
                done.set()
        await consumer.commit()

    async def settled() -> None:
        # The mock gives each partition to one member (Kafka may share one among several),
        # and fences the members whose epoch a join moved on: they join again.
        while sorted(len(m.assignment()) for m in members) != [1, 1, 2]:
            await asyncio.gather(*(m.getmany(timeout_ms=50) for m in members))

    members = [share_mock.member(topic, group) for _ in range(3)]
    for member in members:
        await member.start()
    try:
        await asyncio.wait_for(asyncio.gather(*(worker(m) for m in members)), 30)
        await asyncio.wait_for(settled(), 30)
    finally:
        await asyncio.gather(*(m.close() for m in members))
    assert Counter((r.partition, r.offset) for r in got) == Counter(
        {(p, o): 1 for p in range(4) for o in range(25)}
    )


async def test_a_record_that_fails_to_deserialize_is_released_not_accepted(
    share_mock: ShareMock,
) -> None:
    topic, group = fresh("topic"), fresh("group")
    await share_mock.write(topic, [b"1", b"bad", b"3"])
    failed: list[int] = []

    def decode(value: bytes | None) -> int:
        if value == b"bad" and not failed:
            failed.append(1)
            raise ValueError("not a number")
        return 0 if value == b"bad" else int(value or b"0")

    async with share_mock.member(topic, group, value_deserializer=decode) as consumer:
        first = await consume(consumer, 1)
        with pytest.raises(ShareRecordDeserializationError) as error:
            await consume(consumer, 3)
        # Released, so delivered again (counted); the records after it come too.
        rest = await consume(consumer, 2)
        await consumer.commit()
    assert [(r.offset, r.value) for r in first] == [(0, 1)]
    assert (error.value.offset, error.value.delivery_count) == (1, 1)
    assert "offset 1 (delivery 1; ValueError: not a number)" in str(error.value)
    assert "released" in str(error.value)
    assert sorted((r.offset, r.delivery_count) for r in rest) == [(1, 2), (2, 1)]


async def test_a_dropped_share_session_fails_its_acknowledgements_and_recovers(
    share_mock: ShareMock,
) -> None:
    """The mock drops every share session on a broker when any connection to it closes: the
    acknowledgements of records acquired in the lost session fail at once (Java's consumer
    hung on them: KAFKA-18164), and the records come again in a new session."""
    topic, group = fresh("topic"), fresh("group")
    await share_mock.write(topic, [b"a", b"b"])
    metadata = await share_mock.client.cluster.metadata([topic])
    leader = metadata.brokers[metadata.leader_for(topic, 0)]
    async with share_mock.member(topic, group, share_acknowledgement_mode="explicit") as consumer:
        first = await consume(consumer, 2)
        async with await Connection.open(leader.host, leader.port):
            pass  # its close drops the session
        for record in first:
            consumer.acknowledge(record)
        results = await consumer.commit()
        again = await consume(consumer, 2, answer=consumer.acknowledge)
        assert await consumer.commit() == {TopicPartition(topic, 0): None}
    # the session's own error, at once: not a commit that waited out its time
    assert isinstance(
        results[TopicPartition(topic, 0)], ShareSessionNotFoundError | ShareSessionEndedError
    )
    assert [(r.offset, r.delivery_count) for r in again] == [(0, 2), (1, 2)]


async def test_no_acknowledgement_rides_an_epoch_0_fetch_and_unfetched_partitions_are_forgotten(
    share_mock: ShareMock,
) -> None:
    """Acknowledgements go only into an open session (the broker refuses them on epoch 0:
    KAFKA-18198); those of a partition the member no longer fetches go in a ShareAcknowledge,
    and the partition leaves the session (franz-go 1.21.5 redelivered such partitions' records
    without end)."""
    first_topic, second_topic, group = fresh("topic"), fresh("topic"), fresh("group")
    await share_mock.write(first_topic, [b"a"], partition=1)
    await share_mock.producer.partitions_for(second_topic)  # created, empty
    requests = Requests()
    consumer = ShareConsumer(
        first_topic,
        second_topic,
        bootstrap_servers=share_mock.bootstrap,
        group_id=group,
        share_acknowledgement_mode="explicit",
        connect=requests.connect(),
    )
    async with consumer:
        (record,) = await consume(consumer, 1)
        consumer.subscribe([second_topic])

        async def moved() -> None:
            while any(tp.topic == first_topic for tp in consumer.assignment()):
                await asyncio.sleep(0.01)

        await asyncio.wait_for(moved(), 20)
        consumer.acknowledge(record)
        results = await consumer.commit()
        await share_mock.write(second_topic, [b"c"], partition=1)
        await consume(consumer, 1, answer=consumer.acknowledge)
        first_id = _topic_id(consumer, first_topic)

        async def forgotten() -> None:
            # A long poll sent before the move may bring c; the fetch after it forgets (a
            # loaded machine closed the consumer in between, and no fetch forgot it).
            while not any(
                t.topic_id == first_id
                for f in requests.of(SHARE_FETCH)
                for t in f.forgotten_topics_data
            ):
                await consumer.getmany(timeout_ms=50)

        await asyncio.wait_for(forgotten(), 20)
    assert results == {TopicPartition(first_topic, 1): None}
    fetches = requests.of(SHARE_FETCH)
    assert all(not _acknowledged(f) for f in fetches if f.share_session_epoch == 0)
    acknowledges = [r for r in requests.of(SHARE_ACKNOWLEDGE) if r.share_session_epoch != -1]
    assert first_id in {t.topic_id for a in acknowledges for t in a.topics}
    forgetting = 0
    for sent in requests.by_broker(SHARE_FETCH).values():
        forgot = [
            i
            for i, f in enumerate(sent)
            if any(t.topic_id == first_id for t in f.forgotten_topics_data)
        ]
        if forgot:  # after that, the broker's session never names the topic again
            forgetting += 1
            assert not any(t.topic_id == first_id for f in sent[forgot[0] :] for t in f.topics)
    assert forgetting


def _topic_id(consumer: ShareConsumer, topic: str) -> object:
    metadata = consumer._cluster.current_metadata
    assert metadata is not None
    return metadata.topics[topic].topic_id


def _acknowledged(request: object) -> dict[int, list[tuple[int, int, int]]]:
    return {
        p.partition_index: [
            (b.first_offset, b.last_offset, b.acknowledge_types[0])
            for b in p.acknowledgement_batches
        ]
        for t in request.topics  # type: ignore[attr-defined]
        for p in t.partitions
        if p.acknowledgement_batches
    }


async def test_share_groups_start_at_the_latest_offset_on_the_mock_by_default(
    mock_cluster: Broker,
) -> None:
    """The session mock cluster keeps the mock's default (Kafka's too):
    ``share.auto.offset.reset`` latest, taken when the partition is first fetched."""
    topic, group = fresh("topic"), fresh("group")
    requests = Requests()
    async with (
        KafkaClient(mock_cluster.bootstrap) as client,
        Producer(mock_cluster.bootstrap) as producer,
    ):
        await producer.send_and_wait(topic, b"before", partition=0)
        metadata = await client.cluster.metadata([topic])
        leader = metadata.brokers[metadata.leader_for(topic, 0)].port
        consumer = ShareConsumer(
            topic,
            bootstrap_servers=mock_cluster.bootstrap,
            group_id=group,
            connect=requests.connect(),
        )
        async with consumer:

            async def answered() -> None:  # one at a time per broker: the first was answered
                while len(requests.by_broker(SHARE_FETCH).get(leader, [])) < 2:
                    await consumer.getmany(timeout_ms=20)

            await asyncio.wait_for(answered(), 20)
            await producer.send_and_wait(topic, b"after", partition=0)
            got = await consume(consumer, 1)
    assert [r.value for r in got] == [b"after"]


async def test_a_broker_without_share_groups_fails_at_start_naming_the_api(
    tansu_broker: Broker,
) -> None:
    consumer = ShareConsumer("t", bootstrap_servers=tansu_broker.bootstrap, group_id="g")
    with pytest.raises(
        UnsupportedGroupProtocolError, match=r"API 76 \(ShareGroupHeartbeat\) v1 or later"
    ):
        await consumer.start()
    await consumer.close()


async def test_renew_fails_at_once_on_a_broker_without_share_acknowledge_v2(
    share_mock: ShareMock,
) -> None:
    """The mock serves v1 only and takes RENEW there doing nothing; RENEW is a v2 type
    (KIP-1222), so kafkawire sends none and says why."""
    topic, group = fresh("topic"), fresh("group")
    await share_mock.write(topic, [b"a"])
    async with share_mock.member(topic, group, share_acknowledgement_mode="explicit") as consumer:
        (record,) = await consume(consumer, 1)
        consumer.acknowledge(record, AcknowledgeType.RENEW)
        results = await consumer.commit()
    error = results[TopicPartition(topic, 0)]
    assert isinstance(error, UnsupportedVersionError)
    assert "RENEW needs v2" in str(error)
