"""The idempotent producer's id, recovered as Kafka's Java client recovers it (KIP-360): a new
id when the broker forgot it, InitProducerId retried with backoff; and a producer whose broker
is gone says so at WARNING, without a warning per batch."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from kafkawire.client import KafkaClient
from kafkawire.producer import DeliveryTimeoutError, Producer
from kafkawire.records import RecordBatch, decode_batches
from kafkawire.testing import TansuBroker
from kafkawire.testing.fake import DROP, FakeCluster, HookContext
from kafkawire.testing.fake.faults import answer_partitions
from kafkawire.testing.pytest_plugin import Broker
from tests.net.fakebroker import WAIT
from tests.net.proxy import Proxy
from tests.producer.proxied import proxied_producer


def producer_ids(request: Any) -> set[int]:
    """The producer ids of the batches a Produce request carries."""
    return {
        batch.producer_id
        for topic in request.topic_data
        for p in topic.partition_data
        for batch in decode_batches(p.records)
        if isinstance(batch, RecordBatch)
    }


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name.startswith("kafkawire.producer")
    ]


async def test_a_forgotten_producer_id_is_replaced_and_the_records_go_again(
    fake_cluster: FakeCluster,
) -> None:
    """The broker lost its state (UNKNOWN_PRODUCER_ID) and refuses to bump the epoch of an id
    it does not know (as Tansu answers, UNKNOWN_SERVER_ERROR): a new id is taken."""
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, linger_ms=0, retry_backoff_ms=1) as producer:
        assert (await producer.send_and_wait("t", b"first", partition=0)).offset == 0
        (asked,) = fake_cluster.requests.of("InitProducerId")
        (forgotten,) = producer_ids(fake_cluster.requests.of("Produce")[0].request)

        def no_bump(request: Any, ctx: HookContext) -> Any:
            if request.producer_id == -1:
                return None  # a new id: the fake gives one
            return ctx.response(
                error_code=-1, producer_id=-1, producer_epoch=-1
            )  # UNKNOWN_SERVER_ERROR: no such id here

        fake_cluster.control(
            answer_partitions(59, when=lambda request: forgotten in producer_ids(request)),
            api_key="Produce",
            keep=True,
        )
        fake_cluster.control(no_bump, api_key="InitProducerId", keep=True)
        delivered = await asyncio.wait_for(producer.send_and_wait("t", b"again", partition=0), WAIT)
    assert delivered.offset == 1
    assert asked.request.producer_id == -1
    assert fake_cluster.requests.of("InitProducerId")[-1].request.producer_id == -1
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"first", b"again"]


async def test_init_producer_id_is_retried_with_backoff_and_warned_about_once(
    fake_cluster: FakeCluster, caplog: pytest.LogCaptureFixture
) -> None:
    fake_cluster.create_topic("t")
    refusals = 4  # counted, not timed: a loaded machine makes fewer calls in a time window

    def not_yet(request: Any, ctx: HookContext) -> Any:
        nonlocal refusals
        if refusals:
            refusals -= 1
            return ctx.response(
                error_code=15, producer_id=-1, producer_epoch=-1
            )  # COORDINATOR_NOT_AVAILABLE
        return None

    fake_cluster.control(not_yet, api_key="InitProducerId", keep=True)
    async with Producer(
        fake_cluster.bootstrap, request_timeout_ms=50, retry_backoff_ms=5, retry_backoff_max_ms=50
    ) as producer:
        delivery = producer.send_and_wait("t", b"v", partition=0)
        assert (await asyncio.wait_for(delivery, WAIT)).offset == 0
    assert len(fake_cluster.requests.of("InitProducerId")) >= 5  # four refused, then answered
    assert len([w for w in _warnings(caplog) if "producer id" in w]) == 1


async def test_a_broker_that_stops_answering_is_warned_about_before_records_expire(
    fake_cluster: FakeCluster, caplog: pytest.LogCaptureFixture
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(
        fake_cluster.bootstrap, linger_ms=0, request_timeout_ms=100, delivery_timeout_ms=2_000
    ) as producer:
        await producer.send_and_wait("t", b"v", partition=0)
        fake_cluster.control(lambda request, ctx: DROP, api_key="Produce", keep=True)
        delivery = await producer.send("t", b"w", partition=0)
        async with asyncio.timeout(WAIT):
            while not any("t/0" in w or "t-0" in w for w in _warnings(caplog)):
                await asyncio.sleep(0.01)
        assert not delivery.done()  # said while the record still waits
        await producer.close(timeout=0)


async def test_many_batches_failing_alike_log_a_few_warnings(
    fake_cluster: FakeCluster, caplog: pytest.LogCaptureFixture
) -> None:
    fake_cluster.create_topic("t", 50)
    fake_cluster.control(lambda request, ctx: DROP, api_key="Produce", keep=True)
    async with Producer(
        fake_cluster.bootstrap, linger_ms=0, request_timeout_ms=200, delivery_timeout_ms=300
    ) as producer:
        deliveries = [await producer.send("t", b"v", partition=p) for p in range(50)]
        for delivery in deliveries:
            with pytest.raises(DeliveryTimeoutError):
                await asyncio.wait_for(delivery, WAIT)
    assert 1 <= len(_warnings(caplog)) <= 5


@pytest.mark.asyncio(loop_scope="session")
async def test_a_producer_goes_on_when_its_broker_comes_back_empty(
    tansu_broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    """Tansu keeps producer ids in memory: restarted, it answers UNKNOWN_PRODUCER_ID, and
    InitProducerId with the old id fails; the producer takes a new id and goes on."""
    topic = f"kafkawire-restart-{time.monotonic_ns()}"
    async with KafkaClient(tansu_broker.bootstrap) as client:
        await client.create_topic(topic)
    port = int(tansu_broker.bootstrap.rsplit(":", 1)[1])
    async with (
        Proxy(port) as proxy,
        proxied_producer(proxy, linger_ms=0, retry_backoff_ms=10) as producer,
    ):
        await producer.send_and_wait(topic, b"before", partition=0)
        async with TansuBroker() as empty:
            async with KafkaClient(empty.bootstrap) as client:
                await client.create_topic(topic)
            proxy.upstream_port = int(empty.bootstrap.rsplit(":", 1)[1])
            proxy.cut()
            deliveries = [await producer.send(topic, b"%d" % i, partition=0) for i in range(20)]
            metadata = [await asyncio.wait_for(d, 30) for d in deliveries]
            async with KafkaClient(empty.bootstrap) as client:
                values = [r.value async for r in client.records(topic, 0, 0, stop_at_end=True)]
    assert [m.offset for m in metadata] == list(range(20))
    assert values == [b"%d" % i for i in range(20)]
    assert len(_warnings(caplog)) <= 5


@pytest.mark.parametrize("code", [6, 19], ids=["NOT_LEADER", "NOT_ENOUGH_REPLICAS"])
async def test_a_partitions_first_batch_goes_alone_so_none_overtakes_it(code: int) -> None:
    """A broker with no state for a producer id takes any first sequence (as Kafka's does):
    were the batches behind a first one it refused for a while (no leader, too few replicas,
    too large to take whole: tests/producer/test_batch_split.py) in flight, it would take
    them, and the first one could never follow them. The first batch of a partition goes
    alone: all land once, in order, under the first epoch."""
    async with FakeCluster(1) as cluster:
        cluster.create_topic("t")
        cluster.control(answer_partitions(code), api_key="Produce")  # the first request only
        values = [b"%03d" % i + b"x" * 100 for i in range(5)]
        async with Producer(
            cluster.bootstrap,
            batch_size=150,  # a batch per record: five requests in flight at once
            linger_ms=0,
            retry_backoff_ms=1,
            request_timeout_ms=1_000,
            delivery_timeout_ms=4_000,
        ) as producer:
            sent = await producer.send_batch("t", values, partition=0)
            await asyncio.wait_for(sent, WAIT)
        assert [r.value for r in cluster.records("t", 0)] == values  # once each, in order
        assert len(cluster.requests.of("InitProducerId")) == 1  # no gap: no bump
