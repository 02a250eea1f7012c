"""Shared by the consumer tests: fresh topics (``kafkawire.testing.fresh_topic``, re-exported
here) and records produced to them, and for the group
tests members with small timeouts, a listener that records what it hears (and can be awaited),
and a member that consumes and commits as the documentation says."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

from kafkawire.client import KafkaClient
from kafkawire.consumer import (
    Consumer,
    ConsumerRebalanceListener,
    ConsumerRecord,
    TopicPartition,
)
from kafkawire.errors import KafkawireError
from kafkawire.testing import fresh_topic  # noqa: F401 - the consumer tests import it from here
from kafkawire.testing.pytest_plugin import Broker

_groups = itertools.count()

# Small timeouts: Tansu holds every JoinGroup for half the session timeout.
FAST: dict[str, Any] = {
    "session_timeout_ms": 2000,
    "heartbeat_interval_ms": 200,
    "auto_offset_reset": "earliest",
}


def fresh_group(kind: str) -> str:
    return f"g-{kind}-{next(_groups)}"


async def produce(broker: Broker, topic: str, values: list[bytes], partition: int = 0) -> None:
    """``values`` to one partition, in batches of up to 10 (so reads cross batches)."""
    async with KafkaClient(broker.bootstrap) as client:
        for start in range(0, len(values), 10):
            await client.produce(topic, partition, values[start : start + 10])


async def produce_to_all(broker: Broker, topic: str, partitions: int, each: int) -> set[Any]:
    """``each`` records to every partition; their ``(partition, offset)``s."""
    for p in range(partitions):
        await produce(broker, topic, [b"%d-%d" % (p, i) for i in range(each)], partition=p)
    return {(p, o) for p in range(partitions) for o in range(each)}


async def read(consumer: Consumer, count: int, timeout: float = 20) -> list[ConsumerRecord]:
    """``count`` records (or fail after ``timeout`` s: a test must not hang)."""
    got: list[ConsumerRecord] = []

    async def collect() -> None:
        while len(got) < count:
            for records in (await consumer.getmany(timeout_ms=200)).values():
                got.extend(records)

    await asyncio.wait_for(collect(), timeout)
    return got


def member(broker: Broker, topic: str, group: str, **options: Any) -> Consumer:
    return Consumer(topic, bootstrap_servers=broker.bootstrap, group_id=group, **FAST | options)


async def until(condition: Callable[[], bool], *members: Any, timeout: float = 20) -> None:
    """Poll ``members`` (consumers, or members with a ``step()`` such as :class:`Committing`)
    until ``condition`` holds (or fail after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the group did not settle in time"
        await asyncio.gather(
            *(m.step() if hasattr(m, "step") else m.getmany(timeout_ms=100) for m in members)
        )


async def eventually(condition: Callable[[], bool], timeout: float = 10) -> None:
    """Wait, without polling anything, until ``condition`` holds (or fail after ``timeout``)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


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

    async def until(self, count: int, *polling: Consumer, timeout: float = 10) -> None:
        """Wait until ``count`` events were heard (or fail after ``timeout`` s), polling the
        consumers ``polling`` meanwhile (a rebalance calls the listener from a poll)."""

        async def wait() -> None:
            while len(self.events) < count:
                self._changed.clear()
                if polling:
                    await asyncio.gather(*(c.getmany(timeout_ms=50) for c in polling))
                else:
                    await self._changed.wait()

        await asyncio.wait_for(wait(), timeout)


class Committing(Recorder):
    """A member that processes what ``getmany`` returns and then commits, and commits what it
    processed when partitions are revoked, as the documentation says. A record counts as done
    (``done``: ``(partition, offset)`` in order) once a commit that covers it succeeded; the
    records of a failed commit stay pending until the next one, and are dropped when their
    partition is revoked or lost (the next owner reads them again from the committed offset).
    ``firsts`` (which members may share) gets the first ``(partition, offset)`` read after each
    assignment of a partition."""

    def __init__(
        self, consumer: Consumer, topic: str, firsts: list[tuple[int, int]] | None = None
    ) -> None:
        super().__init__()
        self.consumer = consumer
        self.done: list[tuple[int, int]] = []
        self.firsts = [] if firsts is None else firsts
        self._pending: dict[int, list[int]] = {}
        self._fresh: set[int] = set()
        consumer.subscribe([topic], self)

    async def step(self) -> None:
        batch = await self.consumer.getmany(timeout_ms=100)
        for tp, records in batch.items():
            if tp.partition in self._fresh:
                self._fresh.discard(tp.partition)
                self.firsts.append((tp.partition, records[0].offset))
            self._pending.setdefault(tp.partition, []).extend(r.offset for r in records)
        if batch:
            await self._commit()

    async def _commit(self) -> None:
        try:
            await self.consumer.commit()
        except KafkawireError:
            return  # a rebalance: the next commit covers them, or the next owner reads them
        for partition in sorted(self._pending):
            self.done.extend((partition, o) for o in self._pending.pop(partition))

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        super().on_partitions_revoked(revoked)
        await self._commit()
        self._drop(revoked)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        await super().on_partitions_assigned(assigned)
        self._fresh |= {tp.partition for tp in assigned}

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        super().on_partitions_lost(lost)
        self._drop(lost)

    def _drop(self, partitions: set[TopicPartition]) -> None:
        for tp in partitions:
            self._pending.pop(tp.partition, None)
            self._fresh.discard(tp.partition)
