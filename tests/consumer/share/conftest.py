"""The share consumer's tests: a librdkafka mock cluster of their own for each test, or a
fake cluster (``fake_cluster``).

Each test gets a new mock cluster (it starts in well under a second), for two of the mock's
ways: its share-group settings are the whole cluster's, and any connection that closes drops
every share session on that broker, for every member (``docs/design.md``). So a test's
records are written through a producer that stays open while the consumers run
(``ShareMock.producer``; ``ShareMock.client`` reads metadata), and a test that needs the
mock's settings (a short lock) sets them on its own cluster.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from kafkawire.client import KafkaClient
from kafkawire.producer import Producer
from kafkawire.testing import MockCluster
from kafkawire.testing.fake import FakeCluster

from .helpers import ShareMock


@pytest_asyncio.fixture
async def share_mock() -> AsyncIterator[ShareMock]:
    """A mock cluster whose share groups start at the earliest offset and heartbeat every
    100 ms, with a client for writing records."""
    async with (
        MockCluster(share_auto_offset_reset="earliest", share_heartbeat_interval_ms=100) as cluster,
        KafkaClient(cluster.bootstrap) as client,
        Producer(cluster.bootstrap, linger_ms=0) as producer,
    ):
        yield ShareMock(cluster, client, producer)


@pytest_asyncio.fixture
async def fake_cluster() -> AsyncIterator[FakeCluster]:
    """A fake cluster of three brokers whose share members heartbeat every 50 ms."""
    async with FakeCluster(share_group_heartbeat_interval_ms=50) as cluster:
        yield cluster
