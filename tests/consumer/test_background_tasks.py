"""The consumer's background tasks (the fetcher, a fetch, the group membership) under errors
they do not expect and under a broker that goes away and comes back: never a silent death,
the next call hears of it, the work goes on, and ``close`` does not raise."""

from __future__ import annotations

import asyncio
import gc
import logging
import warnings
from typing import Any

import pytest

from kafkawire.consumer import (
    BackgroundTaskError,
    Consumer,
    ConsumerRebalanceListener,
    TopicPartition,
)
from kafkawire.net import Connection
from kafkawire.testing.fake import FakeCluster
from tests.net.proxy import Proxy

from .helpers import read

T0 = TopicPartition("t", 0)
FAST: dict[str, Any] = {"retry_backoff_ms": 1, "retry_backoff_max_ms": 10, "fetch_max_wait_ms": 20}
WAIT = 10  # the bound on every wait: a test must fail, not hang


def three_records(cluster: FakeCluster) -> None:
    cluster.create_topic("t")
    cluster.produce("t", 0, [b"0", b"1", b"2"])


def failing_once(real: Any, error: BaseException) -> Any:
    """``real`` (an async method), whose first call raises ``error``."""
    calls = 0

    async def call(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise error
        return await real(*args, **kwargs)

    return call


@pytest.mark.parametrize(
    ("broken", "task"),
    [
        ("_cluster.metadata", "the consumer's fetcher"),
        ("_fetcher._send", "fetch from broker {leader}"),
    ],
)
async def test_an_unexpected_error_is_raised_by_the_next_getmany_and_the_work_goes_on(
    broken: str, task: str, caplog: pytest.LogCaptureFixture, fake_cluster: FakeCluster
) -> None:
    three_records(fake_cluster)
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap, **FAST) as consumer:
        owner_name, method = broken.split(".")
        owner = getattr(consumer, owner_name)
        setattr(owner, method, failing_once(getattr(owner, method), OverflowError("too big")))
        consumer.assign([T0])
        consumer.seek(T0, 0)
        with pytest.raises(
            BackgroundTaskError, match=task.format(leader=fake_cluster.leader("t", 0)[0])
        ) as caught:
            await asyncio.wait_for(consumer.getmany(timeout_ms=2000), WAIT)
        got = await read(consumer, 3, timeout=WAIT)
    assert isinstance(caught.value.__cause__, OverflowError)
    assert [r.offset for r in got] == [0, 1, 2]
    assert any(r.exc_info for r in caplog.records if r.levelno == logging.ERROR)  # traceback


async def test_a_failing_membership_is_raised_and_close_does_not_raise(
    fake_cluster: FakeCluster,
) -> None:
    """The membership's heartbeats (and the leave on close) meet an error of no Kafka kind."""
    fake_cluster.create_topic("t")
    consumer = Consumer(
        bootstrap_servers=fake_cluster.bootstrap, group_id="g", group_protocol="consumer", **FAST
    )
    consumer.subscribe(["t"])
    await consumer.start()
    await fake_cluster.requests.wait_for("ConsumerGroupHeartbeat", timeout=WAIT)
    real = consumer._cluster.send

    async def send(request: Any, **options: Any) -> Any:
        if type(request).__name__ == "ConsumerGroupHeartbeatRequest":
            raise OverflowError("cannot convert float infinity to integer")
        return await real(request, **options)

    consumer._cluster.send = send  # type: ignore[method-assign]
    consumer._group.request_rejoin()  # type: ignore[union-attr]  # heartbeat at once
    with pytest.raises(BackgroundTaskError, match="membership of group g") as caught:
        await asyncio.wait_for(consumer.getmany(timeout_ms=5000), WAIT)
    assert isinstance(caught.value.__cause__, OverflowError)
    await asyncio.wait_for(consumer.close(), WAIT)  # does not raise


async def test_a_broker_that_goes_away_and_comes_back_is_read_again() -> None:
    """While it is away, connecting fails with a bare connection error (one no layer wrapped):
    a transient error, retried with backoff, and reading goes on when the broker is back."""
    down, refused = False, 0
    async with FakeCluster(1) as cluster, Proxy(cluster.brokers[0].port) as proxy:
        three_records(cluster)

        async def connect(host: str, port: int) -> Connection:
            nonlocal refused
            if down:
                refused += 1
                raise ConnectionRefusedError(f"{host}:{port} is away")
            return await Connection.open("127.0.0.1", proxy.port, connect_timeout=5)

        async def away() -> None:
            while refused < 3:  # the consumer tries, and fails, while the broker is away
                assert await consumer.getmany(timeout_ms=20) == {}

        async with Consumer(
            bootstrap_servers=f"127.0.0.1:{proxy.port}", connect=connect, **FAST
        ) as consumer:
            consumer.assign([T0])
            consumer.seek(T0, 0)
            first = await read(consumer, 3, timeout=WAIT)
            down = True
            proxy.cut()
            consumer._cluster.mark_metadata_stale()  # the fetcher asks for metadata: refused
            await asyncio.wait_for(away(), WAIT)
            cluster.produce("t", 0, [b"3", b"4"])
            down = False
            later = await read(consumer, 2, timeout=WAIT)
    assert [r.offset for r in first + later] == [0, 1, 2, 3, 4]


async def test_closing_right_after_subscribe_leaves_no_coroutine_unawaited() -> None:
    async with FakeCluster(1) as cluster:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            consumer = Consumer(bootstrap_servers=cluster.bootstrap)
            await consumer.start()
            consumer.subscribe(["t"])
            await consumer.close()
            gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []


def test_subscribe_refuses_one_topic_name_given_as_a_str() -> None:
    consumer = Consumer(bootstrap_servers="127.0.0.1:9")
    with pytest.raises(TypeError, match=r"a list of topic names, not a str: pass \['orders'\]"):
        consumer.subscribe("orders")


async def test_work_a_cancelled_poll_started_is_the_consumers_and_close_cancels_it() -> None:
    """A rebalance's work runs in the poll; a poll the application cancels lets it finish
    (nothing half done), and closing the consumer cancels it: no task outlives the consumer."""
    started, ended = asyncio.Event(), asyncio.Event()

    class Slow(ConsumerRebalanceListener):
        async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            started.set()
            try:
                await asyncio.Event().wait()  # the application's callback takes its time
            finally:
                ended.set()

    async with FakeCluster(1) as cluster:
        cluster.create_topic("t")
        consumer = Consumer(
            bootstrap_servers=cluster.bootstrap, group_id="g", group_protocol="consumer", **FAST
        )
        consumer.subscribe(["t"], Slow())
        await consumer.start()
        poll = asyncio.ensure_future(consumer.getmany(timeout_ms=60_000))
        await asyncio.wait_for(started.wait(), WAIT)
        poll.cancel()
        await asyncio.gather(poll, return_exceptions=True)
        assert not ended.is_set()  # the cancelled poll left the callback running
        await asyncio.wait_for(consumer.close(), WAIT)
        assert ended.is_set()  # the close cancelled it
        left = [t for t in asyncio.all_tasks() if t.get_name().startswith("kafkawire")]
        assert left == []
