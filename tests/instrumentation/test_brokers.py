"""Instrumented clients on each broker: a record's send span, and the receive and process
spans of its consumer linked to it through the record's headers, with the conventions'
attributes. The consumer is assigned its partition (a group without membership: librdkafka's
mock cluster cannot join a lone classic member), so its group name is on every span."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

from kafkawire.cluster import parse_bootstrap
from kafkawire.consumer import Consumer, ConsumerRecord, TopicPartition
from kafkawire.producer import Producer
from kafkawire.testing import fresh_topic
from kafkawire.testing.pytest_plugin import Broker, kafka_brokers

from .conftest import Recorded, ids

pytestmark = pytest.mark.asyncio(loop_scope="session")


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


@kafka_brokers()
async def test_a_record_s_spans_link_its_consumer_to_its_producer(
    kafka_broker: Broker, recorded: Recorded
) -> None:
    topic = await fresh_topic(kafka_broker)
    host, port = parse_bootstrap(kafka_broker.bootstrap)[0]
    server = {"messaging.system": "kafka", "server.address": host, "server.port": port}
    async with Producer(kafka_broker.bootstrap, client_id="shop") as producer:
        deliveries = [
            await producer.send(topic, b"order-%d" % i, key=b"k-%d" % i, partition=0)
            for i in range(3)
        ]
        offsets = [(await delivery).offset for delivery in deliveries]
    sends = recorded.spans(f"{topic} send")
    assert [attributes(s) for s in sends] == [
        {
            **server,
            "messaging.operation.name": "send",
            "messaging.operation.type": "send",
            "messaging.destination.name": topic,
            "messaging.destination.partition.id": "0",
            "messaging.kafka.offset": offsets[i],
            "messaging.kafka.message.key": f"k-{i}",
            "messaging.client.id": "shop",
        }
        for i in range(3)
    ]
    assert all(s.kind is SpanKind.PRODUCER for s in sends)

    tp = TopicPartition(topic, 0)
    processed: list[ConsumerRecord] = []
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap,
        group_id="billing",
        client_id="biller",
        auto_offset_reset="earliest",
    ) as consumer:
        consumer.assign([tp])
        received: list[ConsumerRecord] = []
        while not received:
            batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000, max_records=1), 10)
            received += batches.get(tp, [])
        async for record in consumer:
            processed.append(record)
            if len(processed) == 2:
                break
    consumer_attributes = {
        **server,
        "messaging.destination.name": topic,
        "messaging.destination.partition.id": "0",
        "messaging.consumer.group.name": "billing",
        "messaging.client.id": "biller",
    }

    [receive] = recorded.spans(f"{topic} receive")
    assert receive.kind is SpanKind.CONSUMER
    assert attributes(receive) == {
        **consumer_attributes,
        "messaging.operation.name": "receive",
        "messaging.operation.type": "receive",
        "messaging.batch.message_count": 1,
    }
    assert [ids(link.context) for link in receive.links] == [ids(sends[0].context)]

    processes = recorded.spans(f"{topic} process")
    assert [r.offset for r in processed] == offsets[1:]
    records = zip(processes, sends[1:], processed, strict=True)
    for i, (process, send, record) in enumerate(records, start=1):
        assert process.kind is SpanKind.CONSUMER
        assert ids(process.parent) == ids(send.context)
        assert [ids(link.context) for link in process.links] == [ids(send.context)]
        assert attributes(process) == {
            **consumer_attributes,
            "messaging.operation.name": "process",
            "messaging.operation.type": "process",
            "messaging.kafka.offset": record.offset,
            "messaging.kafka.message.key": f"k-{i}",
        }
