"""``produce`` keeps no delivery it does not need: memory bounded however long the input."""

from __future__ import annotations

import uuid

import pytest

from kafkawire.cli._tally import DeliveryTally
from kafkawire.client import KafkaClient
from kafkawire.errors import InvalidRecordError
from kafkawire.producer import Producer
from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.fake.faults import refuse_partition
from kafkawire.testing.pytest_plugin import Broker

INVALID_RECORD = 87  # not retriable


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


async def test_failures_are_counted_with_the_first_error(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t", 2)
    fake_cluster.control(refuse_partition(1, INVALID_RECORD), api_key="Produce", keep=True)
    async with Producer(fake_cluster.bootstrap, linger_ms=0) as producer:
        tally = DeliveryTally()
        for partition in (0, 1, 0):
            await tally.add(await producer.send("t", b"v", partition=partition))
        await producer.flush()
        tally.settle()
    assert (tally.written, tally.failed, tally.partitions) == (2, 1, {0})
    assert isinstance(tally.first_failure, InvalidRecordError)
