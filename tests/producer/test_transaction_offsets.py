"""Offsets sent to a transaction with the consumer's group metadata (KIP-447), as Java's
``sendOffsetsToTransaction(offsets, ConsumerGroupMetadata)``: the coordinator checks the
member's generation, so a zombie member (one the group has moved on from) is fenced."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

import pytest

from kafkawire.admin import Admin
from kafkawire.client import KafkaClient
from kafkawire.cluster import TopicPartition
from kafkawire.consumer import Consumer, ConsumerStateError
from kafkawire.errors import IllegalGenerationError, UnknownMemberIdError
from kafkawire.producer import ConsumerGroupMetadata, Producer, TransactionStateError
from kafkawire.testing.fake import FakeCluster, ManualClock
from kafkawire.testing.pytest_plugin import Broker
from tests.net.fakebroker import WAIT

_names = (f"kafkawire-txn-offsets-{i}" for i in itertools.count())
_T0 = TopicPartition("t", 0)


@contextlib.asynccontextmanager
async def group_member(cluster: FakeCluster) -> AsyncIterator[ConsumerGroupMetadata]:
    """The group metadata of a real member of group "g" on the fake (static, so its instance
    id is sent too), while it stays in the group."""
    async with Consumer(
        "t",
        bootstrap_servers=cluster.bootstrap,
        group_id="g",
        group_instance_id="instance-1",
        session_timeout_ms=1000,
        heartbeat_interval_ms=50,
        enable_auto_commit=False,
    ) as consumer:
        async with asyncio.timeout(WAIT):
            while not consumer.assignment():
                await consumer.getmany(timeout_ms=50)
        yield consumer.group_metadata()


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    """The fake, with sessions of a second allowed (Kafka's minimum is 6 s), on a clock that
    stands still: the member's session does not expire when a loaded machine delays a
    heartbeat, so its generation stays the one a test reads."""
    async with FakeCluster(group_min_session_timeout_ms=100, clock=ManualClock()) as cluster:
        cluster.create_topic("t")
        yield cluster


async def test_offsets_carry_the_members_generation_and_id(cluster: FakeCluster) -> None:
    async with (
        group_member(cluster) as member,
        Producer(cluster.bootstrap, transactional_id="tx") as producer,
        producer.transaction(),
    ):
        await producer.send("t", b"v", partition=0)
        await producer.send_offsets_to_transaction({_T0: 5}, member)
    (sent,) = [r.request for r in cluster.requests.of("TxnOffsetCommit")]
    assert (sent.group_id, sent.generation_id, sent.member_id, sent.group_instance_id) == (
        "g",
        member.generation_id,
        member.member_id,
        "instance-1",
    )


@pytest.mark.parametrize(
    ("zombie", "error"),
    [
        (lambda m: replace(m, generation_id=m.generation_id - 1), IllegalGenerationError),
        # Without the instance id: a static member's id with another member id is fenced.
        (lambda m: replace(m, member_id="member-0", group_instance_id=None), UnknownMemberIdError),
    ],
    ids=["an-older-generation", "a-member-the-group-does-not-know"],
)
async def test_a_zombie_members_offsets_are_fenced_and_the_transaction_must_abort(
    cluster: FakeCluster,
    zombie: Callable[[ConsumerGroupMetadata], ConsumerGroupMetadata],
    error: type[Exception],
) -> None:
    async with (
        group_member(cluster) as member,
        Producer(cluster.bootstrap, transactional_id="tx") as producer,
    ):
        producer.begin_transaction()
        await producer.send("t", b"v", partition=0)
        with pytest.raises(error):
            await producer.send_offsets_to_transaction({_T0: 5}, zombie(member))
        with pytest.raises(TransactionStateError, match="must be aborted"):
            await producer.commit_transaction()
        await asyncio.wait_for(producer.abort_transaction(), WAIT)
        async with producer.transaction():  # the producer goes on
            await producer.send("t", b"w", partition=0)


async def test_the_group_id_form_commits_without_a_generation(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    async with (
        Producer(fake_cluster.bootstrap, transactional_id="tx") as producer,
        producer.transaction(),
    ):
        await producer.send_offsets_to_transaction({_T0: 5}, "g")
    (sent,) = [r.request for r in fake_cluster.requests.of("TxnOffsetCommit")]
    assert (sent.group_id, sent.generation_id, sent.member_id) == ("g", -1, "")


async def test_a_consumer_without_a_group_has_no_group_metadata(
    fake_cluster: FakeCluster,
) -> None:
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap) as consumer:
        with pytest.raises(ConsumerStateError, match="group_id"):
            consumer.group_metadata()


@pytest.mark.asyncio(loop_scope="session")
async def test_consume_transform_produce_commits_with_the_consumers_metadata(
    tansu_broker: Broker,
) -> None:
    source, sink = next(_names), next(_names)
    group = f"group-{source}"
    async with KafkaClient(tansu_broker.bootstrap) as client:
        for topic in (source, sink):
            await client.create_topic(topic)
        await client.produce(source, 0, [b"a", b"b", b"c"])
    async with (
        Consumer(
            source,
            bootstrap_servers=tansu_broker.bootstrap,
            group_id=group,
            session_timeout_ms=2000,
            heartbeat_interval_ms=200,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        ) as consumer,
        Producer(tansu_broker.bootstrap, transactional_id=f"tx-{source}") as producer,
    ):
        records: list[object] = []
        async with asyncio.timeout(20):
            while len(records) < 3:
                for batch in (await consumer.getmany(timeout_ms=200)).values():
                    records.extend(batch)
        metadata = consumer.group_metadata()
        assert metadata.group_id == group
        assert metadata.generation_id >= 0
        assert metadata.member_id
        async with producer.transaction():
            for record in records:
                await producer.send(sink, record.value.upper(), partition=0)  # type: ignore[attr-defined]
            await producer.send_offsets_to_transaction({TopicPartition(source, 0): 3}, metadata)
    async with Admin(tansu_broker.bootstrap) as admin:
        committed = await admin.list_group_offsets(group, [TopicPartition(source, 0)])
    assert committed[TopicPartition(source, 0)].offset == 3
