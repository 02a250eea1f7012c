"""The producer's background work: it survives what brokers do, and when it cannot go on, it
says so once and every delivery and later call fails with the reason (never a hang)."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from kafkawire.errors import ClusterAuthorizationFailedError
from kafkawire.producer import Producer, ProducerFailedError
from kafkawire.testing.fake import FakeCluster, HookContext
from kafkawire.testing.fake.faults import answer_partitions, delay
from tests.net.fakebroker import WAIT


async def test_a_leader_change_while_metadata_is_slow_loses_nothing() -> None:
    """Refused batches go back to the front of their queue while the sender waits for
    metadata; it once took the wrong batch then, died, and nothing was delivered again."""
    async with FakeCluster(1) as fake:
        fake.create_topic("t", 3)
        until = time.monotonic() + 0.3
        fake.control(delay(0.05), api_key="Metadata", keep=True)
        # Answers to requests in flight arrive during the refresh; NOT_LEADER_OR_FOLLOWER.
        fake.control(delay(0.01), api_key="Produce", keep=True)
        fake.control(
            answer_partitions(6, when=lambda request: time.monotonic() < until),
            api_key="Produce",
            keep=True,
        )
        async with Producer(fake.bootstrap, linger_ms=0, retry_backoff_ms=1) as producer:
            deliveries = []
            for i in range(400):
                deliveries.append(await producer.send("t", b"%d" % i, partition=i % 3))
                await asyncio.sleep(0.002)  # one partition's batch per request
            # A bound, not a timing: ~130 requests per partition, each answered after 10 ms,
            # took over 5 s on a loaded two-core machine.
            await asyncio.wait_for(producer.flush(), 6 * WAIT)
            for delivery in deliveries:
                await delivery
        written = [r.value for p in range(3) for r in fake.records("t", p)]
    assert sorted(written) == sorted(b"%d" % i for i in range(400))


def _errors_logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.levelno >= logging.ERROR and r.name.startswith("kafkawire.producer")
    ]


async def test_a_sender_that_fails_fails_every_delivery_and_every_later_call(
    fake_cluster: FakeCluster, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_cluster.create_topic("t")
    producer = Producer(fake_cluster.bootstrap, linger_ms=10_000)
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


async def test_a_bug_settling_an_answer_fails_the_producer_as_a_request_task_would(
    fake_cluster: FakeCluster, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answers are settled in a callback, not a task per request: what it does not expect
    still ends the producer once, with every delivery failed (never a hang, never lost)."""
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, linger_ms=0) as producer:
        assert (await producer.send_and_wait("t", b"first", partition=0)).offset == 0
        assert producer._sender is not None

        def broken(*args: object) -> None:
            raise RuntimeError("a bug settling a batch")

        monkeypatch.setattr(producer._sender, "_settle", broken)
        with pytest.raises(ProducerFailedError, match="a bug settling a batch") as failed:
            await asyncio.wait_for(producer.send_and_wait("t", b"second", partition=0), WAIT)
        assert isinstance(failed.value.__cause__, RuntimeError)
        with pytest.raises(ProducerFailedError):
            await producer.send("t", b"later", partition=0)
    assert len(_errors_logged(caplog)) == 1


async def test_a_transactional_producer_whose_sender_failed_refuses_transactions(
    fake_cluster: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, transactional_id="tx") as producer:
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
    fake_cluster: FakeCluster, caplog: pytest.LogCaptureFixture
) -> None:
    """As Java's sender does on a fatal InitProducerId error: every record fails with it, and
    so does every later send."""
    fake_cluster.create_topic("t")

    def unauthorized(request: object, ctx: HookContext) -> object:
        return ctx.response(
            error_code=31, producer_id=-1, producer_epoch=-1
        )  # CLUSTER_AUTHORIZATION_FAILED

    fake_cluster.control(unauthorized, api_key="InitProducerId", keep=True)
    async with Producer(fake_cluster.bootstrap, max_block_ms=0) as producer:
        delivery = await producer.send("t", b"v", partition=0)
        with pytest.raises(ClusterAuthorizationFailedError):
            await asyncio.wait_for(delivery, WAIT)
        with pytest.raises(ClusterAuthorizationFailedError):
            await producer.send("t", b"v", partition=0)
    assert len(_errors_logged(caplog)) == 1
