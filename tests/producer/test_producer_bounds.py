"""What bounds the producer's waits, as in Kafka's Java client: ``delivery_timeout_ms`` a
record's whole life (queued or in flight), ``request_timeout_ms`` one request,
``max_block_ms`` only what ``send`` waits for (metadata, buffer space); and what ``close`` and
cancellation do to a ``send`` that waits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire.errors import ClientClosedError, UnknownTopicOrPartitionError
from kafkawire.producer import DeliveryTimeoutError, Producer
from kafkawire.testing.fake import DROP, FakeCluster
from kafkawire.testing.fake.faults import delay
from tests.net.fakebroker import WAIT
from tests.net.proxy import Proxy
from tests.producer.proxied import proxied_producer


async def test_a_send_waiting_for_room_when_close_runs_raises_instead_of_queueing(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(lambda request, ctx: DROP, api_key="Produce", keep=True)
    producer = Producer(fake_cluster.bootstrap, buffer_memory=2_000, linger_ms=0)
    await producer.start()
    for _ in range(16):  # 16 x 121 bytes fill the buffer; nothing is ever answered
        await producer.send("t", b"x" * 100, partition=0)
    blocked = asyncio.create_task(producer.send("t", b"y" * 100, partition=0))
    await asyncio.sleep(0.05)
    assert not blocked.done()  # waiting for room
    await producer.close(timeout=0.1)
    with pytest.raises(ClientClosedError, match="closed"):
        await asyncio.wait_for(blocked, WAIT)


async def test_a_cancelled_send_queued_nothing(fake_cluster: FakeCluster) -> None:
    """A send either returns its delivery or, cancelled, wrote nothing: a caller that sends
    again after a cancellation writes the record once."""
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, linger_ms=0) as producer:
        returned, cancelled = [], 0
        for i in range(50):
            value = b"%d" % i
            task = asyncio.create_task(producer.send("t", value, partition=0))
            await asyncio.sleep(0)  # it runs to its first wait
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                cancelled += 1
            else:
                returned.append(value)
        await asyncio.wait_for(producer.flush(), WAIT)
    assert cancelled > 0
    assert [r.value for r in fake_cluster.records("t", 0)] == returned


@pytest.mark.parametrize(
    ("init_delay", "where"),
    [(60.0, "not sent"), (0.3, "in flight")],
    ids=["waiting for a producer id", "in flight"],
)
async def test_records_expire_at_their_delivery_timeout_wherever_they_wait(
    fake_cluster: FakeCluster, init_delay: float, where: str
) -> None:
    """As Java's sender expires batches: a record fails at its delivery timeout while the
    sender waits for a producer id (never answered here), or while its request, sent late
    (after a slow producer id), still waits for an answer."""
    fake_cluster.create_topic("t")
    fake_cluster.control(lambda request, ctx: DROP, api_key="Produce", keep=True)
    fake_cluster.control(delay(init_delay), api_key="InitProducerId", keep=True)
    async with Producer(
        fake_cluster.bootstrap, linger_ms=0, request_timeout_ms=500, delivery_timeout_ms=600
    ) as producer:
        delivery = await producer.send("t", b"v", partition=0)
        with pytest.raises(DeliveryTimeoutError, match=where):
            await asyncio.wait_for(delivery, WAIT)
        await asyncio.wait_for(producer.close(), WAIT)


async def test_requests_to_an_open_connection_take_no_task_each(
    fake_cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task per Produce request cost more than the rest of its way; once the connection
    is open, the sender writes and the answer settles without one."""
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, linger_ms=0) as producer:
        await producer.send_and_wait("t", b"opens the connection", partition=0)
        spawned: list[str] = []
        spawn = producer._tasks.spawn

        def counted(name: str, *args: Any, **kwargs: Any) -> Any:
            spawned.append(name)
            return spawn(name, *args, **kwargs)

        monkeypatch.setattr(producer._tasks, "spawn", counted)
        for i in range(20):
            await producer.send_and_wait("t", b"%d" % i, partition=0)
    assert len(fake_cluster.requests.of("Produce")) == 21
    assert [name for name in spawned if name.startswith("Produce")] == []


async def test_a_frozen_broker_fails_records_at_their_delivery_timeout() -> None:
    async with FakeCluster(1) as fake:  # one broker: the proxy leads to it alone
        fake.create_topic("t", 3)
        port = int(fake.bootstrap.rsplit(":", 1)[1])
        async with Proxy(port) as proxy:
            producer = proxied_producer(
                proxy,
                connect_timeout=10,  # reconnecting must not hold expiry up
                linger_ms=0,
                request_timeout_ms=300,
                delivery_timeout_ms=400,
            )
            await producer.start()
            assert (await producer.send_and_wait("t", b"before", partition=0)).offset == 0
            proxy.drop = True  # nothing comes back any more
            deliveries = [await producer.send("t", b"%d" % i, partition=i % 3) for i in range(30)]
            for delivery in deliveries:
                with pytest.raises(DeliveryTimeoutError):
                    await asyncio.wait_for(delivery, WAIT)
            await asyncio.wait_for(producer.close(), WAIT)


async def test_max_block_ms_does_not_bound_a_produce_request(fake_cluster: FakeCluster) -> None:
    """Java's max.block.ms bounds what send() waits for, not requests: a Produce answered
    after it is delivered, sent once."""
    fake_cluster.create_topic("t")
    fake_cluster.control(delay(0.3), api_key="Produce", keep=True)
    async with Producer(fake_cluster.bootstrap, max_block_ms=100, linger_ms=0) as producer:
        delivered = await asyncio.wait_for(producer.send_and_wait("t", b"v", partition=0), WAIT)
    assert delivered.offset == 0
    assert len(fake_cluster.requests.of("Produce")) == 1


async def test_max_block_ms_zero_sends_to_known_topics_and_fails_others_at_once(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t", 2)
    async with Producer(fake_cluster.bootstrap, max_block_ms=0) as producer:
        assert (await producer.send_and_wait("t", b"v", partition=1)).offset == 0
        with pytest.raises(UnknownTopicOrPartitionError, match=r"'new'.*max_block_ms"):
            await asyncio.wait_for(producer.send("new", b"v"), WAIT)
