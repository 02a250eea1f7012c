"""``Delivery.add_done_callback``: told once the record is delivered or failed."""

from __future__ import annotations

import asyncio

import pytest

from kafkawire.errors import MessageTooLargeError
from kafkawire.producer import Delivery, Producer, RecordMetadata
from kafkawire.testing.fake import FakeCluster


async def test_the_callback_gets_the_delivery_once_it_resolves(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.create_topic("small", configs={"max.message.bytes": "200"})
    told: list[RecordMetadata | BaseException] = []

    def tell(delivery: Delivery) -> None:
        try:
            told.append(delivery.result())
        except MessageTooLargeError as error:
            told.append(error)

    async with Producer(fake_cluster.bootstrap) as producer:
        delivered = await producer.send("t", b"v")
        delivered.add_done_callback(tell)
        assert told == []  # not delivered yet: nothing was sent
        metadata = await delivered
        failed = await producer.send("small", b"x" * 500)
        failed.add_done_callback(tell)
        with pytest.raises(MessageTooLargeError):
            await failed
        delivered.add_done_callback(tell)  # done already: told soon, on the loop
        await asyncio.sleep(0)
    assert told[0] == metadata
    assert isinstance(told[1], MessageTooLargeError)
    assert told[2] == metadata
