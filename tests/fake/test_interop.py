"""Other clients through the fake: aiokafka, kafka-python and librdkafka (confluent-kafka)
produce and consume as against Kafka, and read what kafkawire wrote; so the fake is checked
by clients that were not written against it."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.producer import Producer
from kafkawire.testing.fake import FakeCluster

VALUES = [b"v%d" % i for i in range(20)]


async def read_with_kafkawire(bootstrap: str, topic: str, count: int, **options: Any) -> list[Any]:
    got: list[Any] = []
    async with Consumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", **options
    ) as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        while len(got) < count:
            for records in (await asyncio.wait_for(consumer.getmany(timeout_ms=200), 5)).values():
                got.extend(records)
    return got


async def read_with_aiokafka(bootstrap: str, topic: str) -> list[Any]:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, 0)])
        got: list[Any] = []
        while len(got) < len(VALUES):
            for records in (await consumer.getmany(timeout_ms=200)).values():
                got.extend(records)
    finally:
        await consumer.stop()
    return got


async def test_aiokafka_produces_idempotently_and_consumes(fake_cluster: FakeCluster) -> None:
    from aiokafka import AIOKafkaProducer

    fake_cluster.create_topic("aio", partitions=2)
    producer = AIOKafkaProducer(
        bootstrap_servers=fake_cluster.bootstrap, enable_idempotence=True, compression_type="gzip"
    )
    await producer.start()
    try:
        for value in VALUES:
            await producer.send("aio", value, key=b"k", partition=0)
        await producer.flush()
    finally:
        await producer.stop()
    got = await read_with_aiokafka(fake_cluster.bootstrap, "aio")
    assert [r.value for r in got] == VALUES
    assert [r.offset for r in got] == list(range(len(VALUES)))
    assert [r.value for r in await read_with_kafkawire(fake_cluster.bootstrap, "aio", 20)] == VALUES


def _kafka_python_round_trip(bootstrap: str) -> list[bytes]:
    with warnings.catch_warnings():
        # kafka-python 3.0 loads its schemas through a deprecated importlib.resources call.
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaConsumer, KafkaProducer
        from kafka import TopicPartition as KafkaPartition

        producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type="lz4", linger_ms=5)
        for value in VALUES:
            producer.send("kp", value, partition=0)
        producer.flush(10)
        producer.close()
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        consumer.assign([KafkaPartition("kp", 0)])
        got: list[bytes] = []
        while len(got) < len(VALUES):
            for records in consumer.poll(timeout_ms=200).values():
                got.extend(r.value for r in records)
        consumer.close()
        return got


async def test_kafka_python_produces_and_consumes(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("kp")
    got = await asyncio.wait_for(
        asyncio.to_thread(_kafka_python_round_trip, fake_cluster.bootstrap), 30
    )
    assert got == VALUES


def _librdkafka_transactions(bootstrap: str) -> list[bytes]:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": "rd", "linger.ms": 1}
    )
    producer.init_transactions(10)
    for committed in (True, False, True):
        producer.begin_transaction()
        producer.produce("rd", b"commit" if committed else b"abort", partition=0)
        if committed:
            producer.commit_transaction(10)
        else:
            producer.abort_transaction(10)
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "unused",  # required by librdkafka; assign() joins no group
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([confluent_kafka.TopicPartition("rd", 0, 0)])
    got: list[bytes] = []
    for _ in range(50):
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            got.append(message.value())
        if len(got) == 2:
            break
    consumer.close()
    return got


async def test_librdkafka_transactions_and_read_committed(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("rd")
    got = await asyncio.wait_for(
        asyncio.to_thread(_librdkafka_transactions, fake_cluster.bootstrap), 30
    )
    assert got == [b"commit", b"commit"]
    records = await read_with_kafkawire(
        fake_cluster.bootstrap, "rd", 2, isolation_level="read_committed"
    )
    assert [r.value for r in records] == [b"commit", b"commit"]


async def test_what_kafkawire_wrote_reads_back_in_aiokafka(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("kw")
    async with Producer(fake_cluster.bootstrap, compression_type="snappy") as producer:
        for value in VALUES:
            await producer.send("kw", value, partition=0, headers=[("h", value)])
        await producer.flush()
    got = await read_with_aiokafka(fake_cluster.bootstrap, "kw")
    assert [(r.value, list(r.headers)) for r in got] == [(v, [("h", v)]) for v in VALUES]
