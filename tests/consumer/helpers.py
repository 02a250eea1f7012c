"""Shared by the consumer tests: fresh topics, records produced to them, and a rebalance
listener that records what it hears."""

from __future__ import annotations

import asyncio
import itertools

from kafkawire.client import KafkaClient
from kafkawire.consumer import (
    Consumer,
    ConsumerRebalanceListener,
    ConsumerRecord,
    TopicPartition,
)
from kafkawire.testing.pytest_plugin import Broker

_names = (f"kafkawire-consumer-{i}" for i in itertools.count())


async def fresh_topic(broker: Broker, partitions: int = 1) -> str:
    """A new topic: created where CreateTopics exists; the mock cluster creates topics on
    first use, with 4 partitions (so tests that count partitions use ``partitions=4``)."""
    name = next(_names)
    async with KafkaClient(broker.bootstrap) as client:
        if broker.capabilities.missing("CreateTopics") is None:
            await client.create_topic(name, partitions=partitions)
        else:
            await client.cluster.refresh_metadata([name], auto_create=True)
    return name


async def produce(broker: Broker, topic: str, values: list[bytes], partition: int = 0) -> None:
    """``values`` to one partition, in batches of up to 10 (so reads cross batches)."""
    async with KafkaClient(broker.bootstrap) as client:
        for start in range(0, len(values), 10):
            await client.produce(topic, partition, values[start : start + 10])


async def read(consumer: Consumer, count: int, timeout: float = 20) -> list[ConsumerRecord]:
    """``count`` records (or fail after ``timeout`` s: a test must not hang)."""
    got: list[ConsumerRecord] = []

    async def collect() -> None:
        while len(got) < count:
            for records in (await consumer.getmany(timeout_ms=200)).values():
                got.extend(records)

    await asyncio.wait_for(collect(), timeout)
    return got


class Recorder(ConsumerRebalanceListener):
    """Records each callback as ``(event, partitions)``; ``on_partitions_assigned`` is
    ``async`` on purpose (listeners may be either)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, set[TopicPartition]]] = []
        self._changed = asyncio.Event()

    def _heard(self, event: str, partitions: set[TopicPartition]) -> None:
        self.events.append((event, partitions))
        self._changed.set()

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self._heard("revoked", revoked)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self._heard("assigned", assigned)

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self._heard("lost", lost)

    async def until(self, count: int, timeout: float = 10) -> None:
        """Wait until ``count`` events were heard (or fail after ``timeout`` s)."""

        async def wait() -> None:
            while len(self.events) < count:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), timeout)
