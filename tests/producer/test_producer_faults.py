"""The producer on the fake cluster (its hooks leave Produce unanswered or refuse it):
back-pressure, cancellation, timeouts, unknown topics and partitions, and its settings."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kafkawire.cluster import InvalidPartitionError
from kafkawire.errors import ClientClosedError, UnknownTopicOrPartitionError
from kafkawire.producer import (
    BufferFullError,
    DeliveryTimeoutError,
    Producer,
    ProducerSettings,
    RecordTooLargeError,
)
from kafkawire.testing.fake import DROP, FakeCluster
from kafkawire.testing.fake.faults import answer_partitions
from tests.net.fakebroker import WAIT


@contextlib.asynccontextmanager
async def brokers(*, answers_produce: bool = True) -> AsyncIterator[FakeCluster]:
    """One broker leading topic ``t`` (three partitions) and no other: it creates none on
    request; with ``answers_produce`` false it never answers a Produce."""
    async with FakeCluster(1, auto_create_topics=False) as cluster:
        cluster.create_topic("t", 3)
        if not answers_produce:
            cluster.control(lambda request, ctx: DROP, api_key="Produce", keep=True)
        yield cluster


async def test_a_full_buffer_blocks_send_then_raises_after_max_block_ms() -> None:
    async with (
        brokers(answers_produce=False) as cluster,
        Producer(cluster.bootstrap, buffer_memory=2_000, max_block_ms=200, linger_ms=0) as producer,
    ):
        for _ in range(16):  # 16 x 121 bytes fit in 2,000; the broker never answers
            await producer.send("t", b"x" * 100, partition=0)
        with pytest.raises(BufferFullError, match="buffer_memory"):
            await asyncio.wait_for(producer.send("t", b"x" * 100, partition=0), WAIT)
        await producer.close(timeout=0.1)


async def test_a_cancelled_send_leaves_the_producer_usable() -> None:
    async with (
        brokers() as cluster,
        Producer(cluster.bootstrap, buffer_memory=1_000, linger_ms=50) as producer,
    ):
        first = await producer.send("t", b"x" * 800, partition=0)
        blocked = asyncio.create_task(producer.send("t", b"y" * 800, partition=0))
        await asyncio.sleep(0.01)
        assert not blocked.done()  # waiting for room
        blocked.cancel()
        with pytest.raises(asyncio.CancelledError):
            await blocked
        assert (await first).offset == 0
        assert (await producer.send_and_wait("t", b"z", partition=1)).partition == 1


async def test_a_lone_record_goes_after_its_linger_and_close_does_not_linger() -> None:
    async with brokers() as cluster:
        async with Producer(cluster.bootstrap, linger_ms=1) as producer:
            # Each waits for its own delivery: the sender must not sleep past the linger.
            for _ in range(20):
                await asyncio.wait_for(producer.send_and_wait("t", b"v", partition=0), 0.5)
        producer = Producer(cluster.bootstrap, linger_ms=60_000, delivery_timeout_ms=120_000)
        await producer.start()
        delivery = await producer.send("t", b"v", partition=1)
        await asyncio.wait_for(producer.close(), WAIT)  # sends at once, lingering no more
        assert (await delivery).offset == 0


async def send_until_expired(cluster: FakeCluster) -> None:
    """One record to a cluster that never answers Produce: retried after each request
    timeout (200 ms), it expires after ``delivery_timeout_ms`` (600)."""
    async with Producer(
        cluster.bootstrap,
        request_timeout_ms=200,
        delivery_timeout_ms=600,
        linger_ms=0,
        retry_backoff_ms=10,
    ) as producer:
        delivery = await producer.send("t", b"v", partition=0)
        with pytest.raises(DeliveryTimeoutError, match="expired"):
            await asyncio.wait_for(delivery, WAIT)


async def test_undelivered_records_expire_after_delivery_timeout_ms() -> None:
    async with brokers(answers_produce=False) as cluster:
        await send_until_expired(cluster)


async def test_a_produce_that_timed_out_is_retried_on_a_new_connection() -> None:
    """Java's NetworkClient disconnects on a request timeout: a broker answers a connection's
    requests in order, so a retry on the same connection would queue behind the unanswered
    one."""
    async with brokers(answers_produce=False) as cluster:
        await send_until_expired(cluster)
        produced = cluster.requests.of("Produce")
    assert len(produced) >= 2  # it was retried meanwhile
    assert produced[0].connection_id != produced[1].connection_id


async def test_close_fails_what_it_could_not_deliver_in_its_timeout() -> None:
    async with brokers(answers_produce=False) as cluster:
        producer = Producer(cluster.bootstrap, linger_ms=0)
        await producer.start()
        delivery = await producer.send("t", b"v", partition=0)
        await producer.close(timeout=0.2)
        with pytest.raises(ClientClosedError, match="closed before the record was delivered"):
            await delivery
        with pytest.raises(ClientClosedError, match="closed"):
            await producer.send("t", b"v")


async def test_unknown_topics_and_partitions() -> None:
    async with (
        brokers() as cluster,
        Producer(cluster.bootstrap, max_block_ms=300) as producer,
    ):
        with pytest.raises(UnknownTopicOrPartitionError, match="after max_block_ms"):
            await asyncio.wait_for(producer.send("nope", b"v"), WAIT)
        with pytest.raises(InvalidPartitionError, match="partition 5 does not exist"):
            await producer.send("t", b"v", partition=5)


async def test_wrong_types_are_refused_before_anything_is_queued() -> None:
    async with brokers() as cluster:
        async with Producer(cluster.bootstrap) as producer:
            with pytest.raises(TypeError, match="the value is str, not bytes"):
                await producer.send("t", "text")
            with pytest.raises(TypeError, match=r"headers\[0\]"):
                await producer.send("t", b"v", headers=[("h", "not bytes")])  # type: ignore[list-item]
            with pytest.raises(RecordTooLargeError):
                await producer.send("t", b"v" * 2_000_000)
            for timestamp in (-1, 2**63, 1.5, "0", True):
                with pytest.raises(ValueError, match="timestamp_ms must be an int"):
                    await producer.send("t", b"v", partition=0, timestamp_ms=timestamp)  # type: ignore[arg-type]
            sent = await producer.send_and_wait("t", b"v", partition=0, timestamp_ms=2**62)
            assert sent.timestamp == 2**62
        async with Producer(cluster.bootstrap, value_serializer=str.encode) as producer:
            assert (await producer.send_and_wait("t", "text", partition=1)).offset == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"acks": 2}, "acks must be"),
        ({"linger_ms": -1}, "linger_ms"),
        ({"compression_type": "brotli"}, "compression_type"),
        ({"enable_idempotence": True, "acks": 1}, "enable_idempotence needs acks='all'"),
        ({"transactional_id": "x", "acks": 0}, "transactional_id needs idempotence"),
        ({"delivery_timeout_ms": 1000}, "delivery_timeout_ms must be at least"),
    ],
)
def test_settings_refuse_bad_values_naming_them(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ProducerSettings(bootstrap_servers="127.0.0.1:9092", **options)


def test_idempotence_is_on_unless_the_settings_rule_it_out() -> None:
    assert ProducerSettings(bootstrap_servers="h:1").idempotent
    assert not ProducerSettings(bootstrap_servers="h:1", acks=1).idempotent
    assert ProducerSettings(bootstrap_servers="h:1", acks="all").acks == -1


def test_a_misspelled_option_names_it_and_the_producer() -> None:
    with pytest.raises(
        TypeError, match=r"Producer\(\) got an unexpected keyword argument 'lingr_ms'"
    ):
        Producer("127.0.0.1:9092", lingr_ms=5)  # type: ignore[call-arg]


async def test_a_leader_move_refreshes_metadata_and_resends_once() -> None:
    async with brokers() as cluster, Producer(cluster.bootstrap, retry_backoff_ms=1) as producer:
        cluster.control(answer_partitions(6), api_key="Produce")  # NOT_LEADER_OR_FOLLOWER, once
        metadata_before = len(cluster.requests.of("Metadata"))
        delivered = await asyncio.wait_for(producer.send_and_wait("t", b"v", partition=0), WAIT)
        assert delivered.offset == 0
        assert len(cluster.requests.of("Produce")) == 2  # refused once, then written
        assert len(cluster.requests.of("Metadata")) > metadata_before  # the leader looked up again
