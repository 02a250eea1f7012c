"""A fake cluster on a hand-driven clock, with topic ``t`` (one partition, led by node 0) that
share group ``workers`` reads from the earliest offset."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kafkawire.testing.fake import FakeCluster, ManualClock
from tests.fake.wire import Wire

from .share import GROUP


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def cluster(clock: ManualClock) -> AsyncIterator[FakeCluster]:
    async with FakeCluster(clock=clock) as cluster:
        cluster.create_topic("t", partitions=1)
        cluster.move_leader("t", 0, 0)
        cluster.set_group_config(GROUP, "share.auto.offset.reset", "earliest")
        yield cluster


@pytest.fixture
async def wire(cluster: FakeCluster) -> AsyncIterator[Wire]:
    async with Wire(cluster, 0) as wire:
        yield wire
