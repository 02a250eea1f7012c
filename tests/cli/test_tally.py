"""``produce`` keeps no delivery it does not need: memory bounded however long the input."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafkawire.cli._tally import DeliveryTally
from kafkawire.client import KafkaClient
from kafkawire.errors import InvalidRecordError
from kafkawire.producer import Producer
from kafkawire.testing.pytest_plugin import Broker
from tests.cluster.hostile import FakeCluster, Handler
from tests.net.fakebroker import FakeClient, messages


@pytest.mark.integration
async def test_deliveries_are_counted_as_they_complete(tansu_broker: Broker) -> None:
    topic = f"tally-{uuid.uuid4().hex[:8]}"
    async with KafkaClient(tansu_broker.bootstrap) as client:
        await client.create_topic(topic, partitions=2)
    tally = DeliveryTally(max_pending=100)
    most_held = 0
    async with Producer(tansu_broker.bootstrap, linger_ms=1, batch_size=1024) as producer:
        for i in range(5000):
            await tally.add(await producer.send(topic, b"%d" % i, partition=i % 2))
            most_held = max(most_held, tally.waiting)
        await producer.flush()
    tally.settle()
    assert most_held <= 101  # the one just added, and at most max_pending before it
    assert (tally.written, tally.failed, tally.partitions) == (5000, 0, {0, 1})
    assert tally.waiting == 0


async def test_failures_are_counted_with_the_first_error() -> None:
    async with (
        FakeCluster(1, refusing_partition(1)) as brokers,
        Producer(brokers.bootstrap, linger_ms=0) as producer,
    ):
        tally = DeliveryTally()
        for partition in (0, 1, 0):
            await tally.add(await producer.send("t", b"v", partition=partition))
        await producer.flush()
        tally.settle()
    assert (tally.written, tally.failed, tally.partitions) == (2, 1, {0})
    assert isinstance(tally.first_failure, InvalidRecordError)


def refusing_partition(refused: int) -> Handler:
    """A broker that gives producer ids and takes every Produce but to ``refused``, which it
    answers with INVALID_RECORD (not retriable)."""

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        module = messages(header.request_api_key, header.request_api_version)
        if header.request_api_key == 22:
            return module.InitProducerIdResponse(producer_id=7, producer_epoch=0)
        if header.request_api_key != 0:
            return None
        topics = tuple(
            module.TopicProduceResponse(
                name=t.name,
                partition_responses=tuple(
                    module.PartitionProduceResponse(
                        index=p.index, error_code=87 if p.index == refused else 0
                    )
                    for p in t.partition_data
                ),
            )
            for t in request.topic_data
        )
        return module.ProduceResponse(responses=topics)

    return handler
