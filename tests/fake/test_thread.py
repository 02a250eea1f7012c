"""A fake cluster on a thread of its own, used from synchronous code and other event loops."""

from __future__ import annotations

import asyncio

import pytest

from kafkawire.client import KafkaClient
from kafkawire.testing.fake import FakeClusterThread


def test_synchronous_code_and_other_loops_use_it() -> None:
    with FakeClusterThread(num_brokers=1) as fake:
        fake.call(lambda cluster: cluster.create_topic("t"))

        async def produce(value: bytes) -> None:
            async with KafkaClient(fake.bootstrap) as client:
                await client.produce("t", 0, [value])

        asyncio.run(produce(b"one"))  # a loop of its own, then another
        asyncio.run(produce(b"two"))
        assert fake.call(lambda cluster: [r.value for r in cluster.records("t", 0)]) == [
            b"one",
            b"two",
        ]
        with pytest.raises(ValueError, match="no partition nope-0"):
            fake.call(lambda cluster: cluster.records("nope", 0))
    with pytest.raises(RuntimeError, match="only inside"):
        fake.call(lambda cluster: cluster.create_topic("late"))
