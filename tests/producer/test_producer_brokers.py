"""The producer against the embedded brokers: what it sends is what a reader gets back."""

from __future__ import annotations

import asyncio
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.admin import Admin
from kafkawire.client import KafkaClient
from kafkawire.cluster import RequestRefusedError, TopicPartition
from kafkawire.errors import InvalidProducerEpochError, ProducerFencedError
from kafkawire.net import Connection
from kafkawire.producer import (
    Producer,
    RecordTooLargeError,
    TransactionStateError,
    end_transaction,
    partition_for_key,
)
from kafkawire.records import ControlType, Header
from kafkawire.testing import fresh_topic, topic_name
from kafkawire.testing.pytest_plugin import Broker, kafka_brokers, mock_cluster_bug, tansu_bug
from tests.net.proxy import Proxy
from tests.producer.proxied import proxied_producer
from tests.transaction_log import markers, raw_log, read_committed

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def read_back(broker: Broker, topic: str, partition: int = 0) -> list[Any]:
    async with KafkaClient(broker.bootstrap) as client:
        return [r async for r in client.records(topic, partition, 0, stop_at_end=True)]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
async def test_every_codec_round_trips_keys_values_and_headers(
    kafka_broker: Broker, codec: Any
) -> None:
    topic = await fresh_topic(kafka_broker)
    sent = [
        (f"k{i}".encode() if i % 3 else None, None if i % 7 == 0 else b"v" * i, [("h", bytes([i]))])
        for i in range(60)
    ]
    async with Producer(kafka_broker.bootstrap, compression_type=codec, linger_ms=20) as producer:
        deliveries = [
            await producer.send(topic, value, key, partition=0, headers=headers)
            for key, value, headers in sent
        ]
        metadata = [await d for d in deliveries]
    offsets = [m.offset for m in metadata]
    assert offsets == list(range(offsets[0], offsets[0] + 60))
    records = await read_back(kafka_broker, topic)
    assert [(r.key, r.value, r.headers) for r in records[-60:]] == [
        (key, value, (Header("h", h[0][1]),)) for key, value, h in sent
    ]


async def test_keyed_records_go_to_their_murmur2_partition(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker, partitions=3)
    async with Producer(kafka_broker.bootstrap) as producer:
        count = len(await producer.partitions_for(topic))
        keys = [f"key-{i}".encode() for i in range(30)]
        placed = [await producer.send_and_wait(topic, b"v", key) for key in keys]
    assert [m.partition for m in placed] == [partition_for_key(k, count) for k in keys]


@pytest.mark.parametrize("acks", [0, 1, "all"])
async def test_acks(kafka_broker: Broker, acks: Any) -> None:
    topic = await fresh_topic(kafka_broker)
    async with Producer(kafka_broker.bootstrap, acks=acks) as producer:
        deliveries = [await producer.send(topic, b"%d" % i, partition=0) for i in range(20)]
        metadata = [await d for d in deliveries]
    if acks == 0:
        assert {m.offset for m in metadata} == {-1}
    else:
        assert metadata[-1].offset == metadata[0].offset + 19
    records = await read_back(kafka_broker, topic)
    assert [r.value for r in records][-20:] == [b"%d" % i for i in range(20)]


async def test_close_delivers_what_is_queued(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker)
    producer = Producer(kafka_broker.bootstrap, linger_ms=60_000, batch_size=1_000_000)
    await producer.start()
    deliveries = [await producer.send(topic, b"x", partition=0) for _ in range(100)]
    assert not any(d.done() for d in deliveries)  # lingering
    await producer.close()
    assert all(d.done() for d in deliveries)
    assert len({(await d).offset for d in deliveries}) == 100


async def test_a_large_record_and_one_too_large(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker)
    async with Producer(kafka_broker.bootstrap, max_request_size=600_000) as producer:
        big = await producer.send_and_wait(topic, b"b" * 500_000, partition=0)
        with pytest.raises(RecordTooLargeError, match="max_request_size"):
            await producer.send(topic, b"t" * 700_000, partition=0)
        after = await producer.send_and_wait(topic, b"small", partition=0)
    assert after.offset == big.offset + 1


async def test_idempotent_retries_after_cuts_neither_lose_nor_duplicate(
    tansu_broker: Broker,
) -> None:
    topic = await fresh_topic(tansu_broker)
    port = int(tansu_broker.bootstrap.rsplit(":", 1)[1])
    async with (
        Proxy(port) as proxy,
        proxied_producer(proxy, batch_size=2_000, linger_ms=1) as producer,
    ):
        deliveries = []
        for i in range(3_000):
            deliveries.append(await producer.send(topic, b"%06d" % i, partition=0))
            if i % 500 == 250:
                proxy.cut()  # answers in flight are lost: the batches go again
        await producer.flush()
        assert all(d.done() for d in deliveries)
        for d in deliveries:
            await d  # every record was delivered
    values = [r.value for r in await read_back(tansu_broker, topic)]
    assert values == [b"%06d" % i for i in range(3_000)]


async def test_a_transaction_commits_and_another_aborts(mock_cluster: Broker) -> None:
    topic = topic_name()
    async with Producer(mock_cluster.bootstrap, transactional_id=f"tx-{topic}") as producer:
        async with producer.transaction():
            await producer.send(topic, b"committed", partition=0)

        async def change_of_mind() -> None:
            async with producer.transaction():
                await producer.send(topic, b"aborted", partition=0)
                await producer.flush()
                raise RuntimeError("changed my mind")

        with pytest.raises(RuntimeError, match="changed my mind"):
            await change_of_mind()
        async with producer.transaction():
            await producer.send(topic, b"committed too", partition=0)
    log = await raw_log(mock_cluster.bootstrap, topic)
    assert markers(log) == [
        b"committed",
        ControlType.COMMIT,
        b"aborted",
        ControlType.ABORT,
        b"committed too",
        ControlType.COMMIT,
    ]
    assert [r.value for r in read_committed(log)] == [b"committed", b"committed too"]


@pytest.mark.parametrize("commit", [True, False])
async def test_a_prepared_transaction_is_ended_by_another_client(
    kafka_broker: Broker, commit: bool
) -> None:
    """Two-phase commit: the producer hands its transaction over open and closes; a client
    elsewhere ends it with the producer id and epoch it was given."""
    topic = await fresh_topic(kafka_broker)
    async with Producer(kafka_broker.bootstrap, transactional_id=f"tx-{topic}") as producer:
        producer.begin_transaction()
        await producer.send(topic, b"prepared", partition=0)
        prepared = await producer.prepare_transaction()
        with pytest.raises(TransactionStateError, match="end_transaction"):
            producer.begin_transaction()
    log = await raw_log(kafka_broker.bootstrap, topic)
    assert (markers(log), read_committed(log)) == ([b"prepared"], [])  # still open
    async with KafkaClient(kafka_broker.bootstrap) as client:
        await end_transaction(client, pickle.loads(pickle.dumps(prepared)), commit=commit)
        await end_transaction(client, prepared, commit=commit)  # a retried EndTxn succeeds
    ended = ControlType.COMMIT if commit else ControlType.ABORT
    log = await raw_log(kafka_broker.bootstrap, topic)
    assert markers(log) == [b"prepared", ended]
    assert [r.value for r in read_committed(log)] == ([b"prepared"] if commit else [])


@kafka_brokers(
    mock_cluster=mock_cluster_bug("TxnOffsetCommit stores nothing: OffsetFetch answers -1")
)
async def test_offsets_sent_to_a_transaction_are_committed_with_it(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker)
    tp, group = TopicPartition(topic, 0), f"group-{topic}"

    async def committed() -> int:
        async with Admin(kafka_broker.bootstrap) as admin:
            return (await admin.list_group_offsets(group, [tp]))[tp].offset

    async with Producer(kafka_broker.bootstrap, transactional_id=f"tx-{topic}") as producer:
        producer.begin_transaction()
        await producer.send(topic, b"aborted", partition=0)
        await producer.send_offsets_to_transaction({tp: (5, "five")}, group)
        await producer.flush()
        assert await committed() == -1  # not while the transaction is open
        await producer.abort_transaction()
        assert await committed() == -1
        async with producer.transaction():
            await producer.send(topic, b"committed", partition=0)
            await producer.send_offsets_to_transaction({tp: 7}, group)
    assert await committed() == 7


@kafka_brokers(
    tansu=tansu_bug("EndTxn with a fenced epoch drops the connection", raises=RequestRefusedError),
    mock_cluster=mock_cluster_bug(
        "InitProducerId gives a new producer id: nothing is fenced or aborted"
    ),
)
async def test_a_new_producer_with_the_id_fences_a_prepared_transaction(
    kafka_broker: Broker,
) -> None:
    topic = await fresh_topic(kafka_broker)
    transactional_id = f"tx-{topic}"
    async with Producer(kafka_broker.bootstrap, transactional_id=transactional_id) as producer:
        producer.begin_transaction()
        await producer.send(topic, b"zombie", partition=0)
        prepared = await producer.prepare_transaction()
    async with Producer(kafka_broker.bootstrap, transactional_id=transactional_id):
        pass  # InitProducerId: fences the epoch that prepared, and aborts its transaction
    assert markers(await raw_log(kafka_broker.bootstrap, topic)) == [b"zombie", ControlType.ABORT]
    async with KafkaClient(kafka_broker.bootstrap) as client:
        with pytest.raises((ProducerFencedError, InvalidProducerEpochError)):
            await end_transaction(client, prepared, commit=True)


async def test_a_batch_sent_as_the_connection_opens_does_not_overtake_older_ones(
    tansu_broker: Broker,
) -> None:
    """Batches dispatched while the produce connection opens wait for it; one dispatched just
    as it opens must still be built and written after them. It once went first, with a
    sequence number above theirs: OUT_OF_ORDER_SEQUENCE_NUMBER, and the transaction lost."""
    topic = await fresh_topic(tansu_broker)
    armed, release, sent_late = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def connect(host: str, port: int) -> Connection:
        conn = await Connection.open(host, port, connect_timeout=5)
        if armed.is_set():  # the produce connection: the others opened before
            armed.clear()
            await release.wait()
            await producer.send(topic, b"late", partition=0)
            sent_late.set()
        return conn

    async with Producer(
        tansu_broker.bootstrap, connect=connect, transactional_id=f"tx-{topic}", linger_ms=0
    ) as producer:
        await producer.partitions_for(topic)
        producer.begin_transaction()
        armed.set()
        # The partition's first batch goes alone (sender.py): the others wait for its answer.
        await producer.send(topic, b"early-0", partition=0)
        await _dispatched(producer)
        for value in (b"early-1", b"early-2"):
            await producer.send(topic, value, partition=0)
        release.set()
        await sent_late.wait()  # a commit refuses records from the moment it is called
        await producer.commit_transaction()
    values = [r.value for r in await read_back(tansu_broker, topic)]
    assert values == [b"early-0", b"early-1", b"early-2", b"late"]


async def _dispatched(producer: Producer) -> None:
    """Until the producer's queue is empty: every batch is in a request (no event says so)."""
    async with asyncio.timeout(10):
        while not producer._accumulator.empty:
            await asyncio.sleep(0.001)


async def test_sends_wait_for_a_new_topic_the_broker_creates(mock_cluster: Broker) -> None:
    topic = topic_name()  # the mock cluster creates topics on first use
    async with Producer(mock_cluster.bootstrap) as producer:
        metadata = await asyncio.wait_for(producer.send_and_wait(topic, b"first"), 30)
    assert metadata.offset == 0


def _confluent_read(bootstrap: str, topic: str, count: int) -> list[tuple[Any, Any, Any]]:
    """What confluent-kafka (librdkafka) reads of partition 0, from the start."""
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "enable.auto.commit": False}
    )
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
    seen: list[tuple[Any, Any, Any]] = []
    try:
        while len(seen) < count:
            message = consumer.poll(10)
            assert message is not None, f"confluent-kafka read {len(seen)} of {count} records"
            assert message.error() is None, message.error()
            seen.append((message.key(), message.value(), message.headers()))
    finally:
        consumer.close()
    return seen


def _kafka_python_read(bootstrap: str, topic: str, count: int) -> list[tuple[Any, Any, Any]]:
    """What kafka-python reads of partition 0, from the start."""
    with warnings.catch_warnings():
        # kafka-python 3.0 loads its schemas through a deprecated importlib.resources call.
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaConsumer
        from kafka import TopicPartition as KafkaPythonPartition

        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        partition = KafkaPythonPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        seen: list[tuple[Any, Any, Any]] = []
        try:
            while len(seen) < count:
                polled = consumer.poll(timeout_ms=10_000).get(partition, [])
                assert polled, f"kafka-python read {len(seen)} of {count} records"
                seen += [(m.key, m.value, list(m.headers)) for m in polled]
        finally:
            consumer.close()
    return seen


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize(
    "peer_read", [_confluent_read, _kafka_python_read], ids=["confluent-kafka", "kafka-python"]
)
async def test_peers_read_what_kafkawire_produced(
    tansu_broker: Broker, codec: Any, peer_read: Callable[[str, str, int], list[Any]]
) -> None:
    topic = await fresh_topic(tansu_broker)
    sent: list[tuple[Any, Any, Any]] = [
        (b"k%d" % i if i % 2 else None, b"v" * i, [("h", b"%d" % i)]) for i in range(40)
    ]
    async with Producer(tansu_broker.bootstrap, compression_type=codec) as producer:
        for key, value, headers in sent:
            await producer.send(topic, value, key, partition=0, headers=headers)
    read = await asyncio.to_thread(peer_read, tansu_broker.bootstrap, topic, len(sent))
    assert read == sent


async def test_many_partitions_receive_what_their_keys_and_stickiness_say(
    tansu_broker: Broker,
) -> None:
    topic = await fresh_topic(tansu_broker, partitions=12)
    async with Producer(tansu_broker.bootstrap, batch_size=1_000) as producer:
        keyed = [await producer.send(topic, b"v", b"key-%d" % i) for i in range(300)]
        keyless = [await producer.send(topic, b"x" * 50) for _ in range(300)]
        placed = [await d for d in keyed + keyless]
    assert [m.partition for m in placed[:300]] == [
        partition_for_key(b"key-%d" % i, 12) for i in range(300)
    ]
    assert len({m.partition for m in placed[300:]}) > 1  # sticky, but moving on per batch
    counts = [len(await read_back(tansu_broker, topic, p)) for p in range(12)]
    assert sum(counts) == 600
