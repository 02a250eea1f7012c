"""Shared by the share consumer's tests: a mock cluster with a client that writes records,
topics and members on the fake cluster, consuming until a count or a condition, and a record
of the requests a consumer sends."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkawire.client import KafkaClient
from kafkawire.cluster import ConnectionFactory
from kafkawire.consumer import ConsumerRecord, ShareConsumer
from kafkawire.net import Connection
from kafkawire.producer import Producer
from kafkawire.testing import MockCluster
from kafkawire.testing.fake import FakeCluster

_names = itertools.count()


def fresh(kind: str) -> str:
    """A topic or group name no other test uses."""
    return f"share-{kind}-{next(_names)}"


@dataclass
class ShareMock:
    cluster: MockCluster
    # Both open for the whole test: a closed connection drops the mock's share sessions.
    client: KafkaClient
    producer: Producer

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap

    async def write(self, topic: str, values: list[bytes], *, partition: int = 0) -> None:
        """``values`` to one partition, in batches of up to 10 (so reads cross batches)."""
        for start in range(0, len(values), 10):
            for value in values[start : start + 10]:
                await self.producer.send(topic, value, partition=partition)
            await self.producer.flush()

    def member(self, topic: str, group: str, **options: Any) -> ShareConsumer:
        return ShareConsumer(topic, bootstrap_servers=self.bootstrap, group_id=group, **options)


def fake_topic(cluster: FakeCluster, *values: bytes) -> str:
    """A new one-partition topic of the fake cluster, holding ``values``."""
    topic = fresh("topic")
    cluster.create_topic(topic, partitions=1)
    if values:
        cluster.produce(topic, 0, list(values))
    return topic


def fake_member(
    cluster: FakeCluster, topic: str, group: str | None = None, **options: Any
) -> ShareConsumer:
    """A member of ``group`` (a new one if none), which starts at the earliest record; its
    long poll is short (``fetch_max_wait_ms`` 50: a close waits for it)."""
    group = group or fresh("group")
    cluster.set_group_config(group, "share.auto.offset.reset", "earliest")
    options = {"fetch_max_wait_ms": 50, **options}
    return ShareConsumer(topic, bootstrap_servers=cluster.bootstrap, group_id=group, **options)


async def consume(
    consumer: ShareConsumer,
    count: int,
    *,
    answer: Callable[[ConsumerRecord], object] | None = None,
    timeout: float = 20,
) -> list[ConsumerRecord]:
    """``count`` records (or fail after ``timeout`` s: a test must not hang); ``answer`` is
    called with each (to acknowledge it, in explicit mode)."""
    got: list[ConsumerRecord] = []

    async def collect() -> None:
        while len(got) < count:
            for records in (await consumer.getmany(timeout_ms=200)).values():
                for record in records:
                    got.append(record)
                    if answer is not None:
                        answer(record)

    await asyncio.wait_for(collect(), timeout)
    return got


class Requests:
    """Every request a consumer sends (through ``connect``), in order, with the port of the
    broker it went to."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, Any]] = []

    def connect(self, origin: ConnectionFactory | None = None) -> ConnectionFactory:
        async def open_connection(host: str, port: int) -> Connection:
            conn = await (origin or _plain)(host, port)
            send = conn.send

            async def recorded(request: Any, **options: Any) -> Any:
                self.sent.append((port, request))
                return await send(request, **options)

            conn.send = recorded  # type: ignore[method-assign]
            return conn

        return open_connection

    def of(self, api_key: int) -> list[Any]:
        return [r for _, r in self.sent if r.__api_key__ == api_key]

    def by_broker(self, api_key: int) -> dict[int, list[Any]]:
        """The requests of ``api_key``, by the port of the broker they went to."""
        found: dict[int, list[Any]] = {}
        for port, request in self.sent:
            if request.__api_key__ == api_key:
                found.setdefault(port, []).append(request)
        return found


async def _plain(host: str, port: int) -> Connection:
    return await Connection.open(host, port)
