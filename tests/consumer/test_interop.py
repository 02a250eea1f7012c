"""The consumer reads what other clients produced: librdkafka (confluent-kafka) and
kafka-python, with every codec they write, keys, headers and null values."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.testing.pytest_plugin import Broker

from .helpers import fresh_topic, read

pytestmark = pytest.mark.asyncio(loop_scope="session")

# Keys, null keys, null values (never both: kafka-python refuses that), empty values, headers.
RECORDS: list[tuple[Any, Any, list[tuple[str, bytes]]]] = [
    (
        None if i % 3 == 0 and i % 5 != 4 else b"k%d" % i,
        None if i % 5 == 4 else b"v" * i,
        [("h", b"%d" % i)],
    )
    for i in range(30)
]


def _confluent_produce(bootstrap: str, topic: str, codec: str) -> None:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 5}
    )
    for key, value, headers in RECORDS:
        producer.produce(topic, value, key, partition=0, headers=headers)
    assert producer.flush(30) == 0


def _kafka_python_produce(bootstrap: str, topic: str, codec: str) -> None:
    with warnings.catch_warnings():
        # kafka-python 3.0 loads its schemas through a deprecated importlib.resources call.
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaProducer

        producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            compression_type=None if codec == "none" else codec,
            linger_ms=5,
        )
        for key, value, headers in RECORDS:
            producer.send(topic, value, key, partition=0, headers=headers)
        producer.flush(30)
        producer.close()


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize("produce", [_confluent_produce, _kafka_python_produce])
async def test_what_other_clients_produced_reads_back_exactly(
    tansu_broker: Broker, produce: Any, codec: str
) -> None:
    topic = await fresh_topic(tansu_broker)
    await asyncio.to_thread(produce, tansu_broker.bootstrap, topic, codec)
    async with Consumer(bootstrap_servers=tansu_broker.bootstrap) as consumer:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        records = await read(consumer, len(RECORDS))
    got = [(r.key, r.value, [(h.key, h.value) for h in r.headers]) for r in records]
    assert got == RECORDS
    assert [r.offset for r in records] == list(range(len(RECORDS)))
