"""The producer's background work: it survives what brokers do, and when it cannot go on, it
says so once and every delivery and later call fails with the reason (never a hang)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from kafkawire.errors import ClusterAuthorizationFailedError
from kafkawire.producer import Producer, ProducerFailedError
from tests.net.fakebroker import WAIT
from tests.producer.fake_broker import ProducerBroker


async def test_a_leader_change_while_metadata_is_slow_loses_nothing() -> None:
    """Refused batches go back to the front of their queue while the sender waits for
    metadata; it once took the wrong batch then, died, and nothing was delivered again."""
    async with ProducerBroker() as broker:
        until = time.monotonic() + 0.3
        broker.produce_error = lambda topic, partition, batch: 6 if time.monotonic() < until else 0
        broker.metadata_delay = 0.05
        broker.produce_delay = 0.01  # answers to requests in flight arrive during the refresh
        async with Producer(broker.bootstrap, linger_ms=0, retry_backoff_ms=1) as producer:
            deliveries = []
            for i in range(400):
                deliveries.append(await producer.send("t", b"%d" % i, partition=i % 3))
                await asyncio.sleep(0.002)  # one partition's batch per request
            await asyncio.wait_for(producer.flush(), WAIT)
            offsets = [(await d).offset for d in deliveries]
    assert sorted(offsets) == sorted(list(range(134)) + list(range(133)) + list(range(133)))


def _errors_logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.levelno >= logging.ERROR and r.name.startswith("kafkawire.producer")
    ]


async def test_a_sender_that_fails_fails_every_delivery_and_every_later_call(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with ProducerBroker() as broker:
        producer = Producer(broker.bootstrap, linger_ms=10_000)
        await producer.start()
        lingering = await producer.send("t", b"queued", partition=0)
        assert producer._accumulator is not None

        def broken(*args: object) -> None:  # a bug the sender did not foresee
            raise RuntimeError("a bug in the sender")

        monkeypatch.setattr(producer._accumulator, "ready", broken)
        producer._accumulator.wakeup.set()
        with pytest.raises(ProducerFailedError, match="a bug in the sender") as failed:
            await asyncio.wait_for(lingering, WAIT)
        assert isinstance(failed.value.__cause__, RuntimeError)
        with pytest.raises(ProducerFailedError, match="a bug in the sender"):
            await producer.send("t", b"later", partition=0)
        with pytest.raises(ProducerFailedError, match="a bug in the sender"):
            await asyncio.wait_for(producer.flush(), WAIT)
        await asyncio.wait_for(producer.close(), WAIT)
    assert len(_errors_logged(caplog)) == 1  # said once, with the traceback
    assert _errors_logged(caplog)[0].exc_info is not None


async def test_a_transactional_producer_whose_sender_failed_refuses_transactions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with (
        ProducerBroker() as broker,
        Producer(broker.bootstrap, transactional_id="tx") as producer,
    ):
        producer.begin_transaction()
        pending = await producer.send("t", b"v", partition=0)
        assert producer._accumulator is not None

        def broken(*args: object) -> None:
            raise RuntimeError("a bug in the sender")

        monkeypatch.setattr(producer._accumulator, "ready", broken)
        producer._accumulator.wakeup.set()
        with pytest.raises(ProducerFailedError):
            await asyncio.wait_for(pending, WAIT)
        with pytest.raises(ProducerFailedError):
            await producer.commit_transaction()
        with pytest.raises(ProducerFailedError):
            await producer.abort_transaction()
        with pytest.raises(ProducerFailedError):
            producer.begin_transaction()


async def test_a_producer_id_refused_for_good_fails_the_producer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """As Java's sender does on a fatal InitProducerId error: every record fails with it, and
    so does every later send."""
    async with ProducerBroker() as broker:
        broker.init_producer_id = lambda request: (31, -1, -1)  # CLUSTER_AUTHORIZATION_FAILED
        async with Producer(broker.bootstrap, max_block_ms=0) as producer:
            delivery = await producer.send("t", b"v", partition=0)
            with pytest.raises(ClusterAuthorizationFailedError):
                await asyncio.wait_for(delivery, WAIT)
            with pytest.raises(ClusterAuthorizationFailedError):
                await producer.send("t", b"v", partition=0)
    assert len(_errors_logged(caplog)) == 1
