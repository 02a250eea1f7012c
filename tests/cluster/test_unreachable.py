"""Brokers that cannot be reached, refuse, or answer garbage: the cluster backs off from each
broker (exponentially, capped, with jitter), waits instead of spinning, logs once, falls back
to the bootstrap addresses, and uses a broker again when it comes back (issue 19).

Each test failed before the change it covers: after ~1,024 failures the backoff raised
OverflowError; callers reconnected as fast as they called; metadata naming only unusable
brokers stranded the client; nothing said at WARNING that a broker was unreachable.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from kafkawire.cluster import Backoff, ClientSettings, Cluster, _health
from kafkawire.cluster._pool import ConnectionPool
from kafkawire.errors import ClientClosedError, ConnectionClosedError, KafkawireError
from kafkawire.net import Connection
from kafkawire.net.errors import ConnectError
from kafkawire.testing.fake import FakeCluster
from tests.net.fakebroker import WAIT

from .hostile import (
    Answer,
    SilentServer,
    answer_garbage,
    close_at_once,
    free_port,
    send_2gb_frame,
)
from .stopped_clock import StoppedClock
from .test_faults import hold_the_first, long_poll, offsets_of

TINY = Backoff(initial=0.0001, maximum=0.0002)
PACED = Backoff(initial=0.01, maximum=0.05)
WINDOW = 0.5  # seconds over which a silent broker is called


async def never_connects(host: str, port: int) -> Connection:
    raise AssertionError("not connected in this test")


def test_the_backoff_after_any_number_of_failures_is_capped() -> None:
    backoff = Backoff(initial=0.05, maximum=1.0)
    assert 0.04 <= backoff.after(1) <= 0.06
    assert 0.08 <= backoff.after(2) <= 0.12
    for failures in (11, 1024, 1025, 10**6):
        assert 0.8 <= backoff.after(failures) <= 1.0  # jittered below the cap too
    assert Backoff(initial=0, maximum=1).after(10**6) == 0


def test_thousands_of_failures_do_not_overflow() -> None:
    pool = ConnectionPool(never_connects, Backoff(initial=0.05, maximum=1.0))
    for _ in range(5000):
        pool.failed(1, "refused")
    assert not pool.usable(1)  # in its backoff, which ends within the cap
    pool.answered(1)
    assert pool.usable(1)


def counting_connect(
    settings: ClientSettings, attempts: list[int], started: list[float] | None = None
) -> Any:
    """Connects as the cluster would, noting each attempt's port (and in ``started`` its
    ``time.monotonic()``)."""

    async def connect(host: str, port: int) -> Connection:
        attempts.append(port)
        if started is not None:
            started.append(time.monotonic())
        return await Connection.open(host, port, connect_timeout=settings.connect_timeout)

    return connect


async def keep_calling(
    cluster: Cluster, calls: list[BaseException], go_on: Callable[[], bool]
) -> None:
    """A caller that asks for metadata again as soon as a call fails, as a fetch loop does,
    while ``go_on()``."""
    while go_on():
        try:
            await cluster.metadata()
        except KafkawireError as exc:
            calls.append(exc)
        else:
            return


async def test_a_refused_port_fails_thousands_of_times_then_the_broker_comes_back() -> None:
    async with FakeCluster(1) as fake:
        await fake.stop_broker(0)  # its port refuses connections until it starts again
        address = fake.address(0)
        settings = ClientSettings(reconnect_backoff=TINY, retry_timeout=WAIT)
        attempts: list[int] = []
        cluster = Cluster(address, settings, connect=counting_connect(settings, attempts))
        try:
            while len(attempts) < 1100:  # each call connects once, after the broker's backoff
                with pytest.raises(ConnectError, match=r"Connect call failed|refused"):
                    await asyncio.wait_for(cluster.metadata(), WAIT)
            await fake.start_broker(0)
            metadata = await asyncio.wait_for(cluster.metadata(), WAIT)
        finally:
            await cluster.close()
    assert f"127.0.0.1:{metadata.brokers[0].port}" == address


@pytest.mark.parametrize(
    "answer",
    [None, close_at_once, send_2gb_frame, answer_garbage],
    ids=["refused", "closes-at-once", "2gb-frame", "garbage-api-versions"],
)
async def test_reconnects_are_paced_by_the_backoff_and_callers_wait(answer: Answer | None) -> None:
    async with SilentServer(answer) as server:
        port = free_port() if answer is None else server.port
        settings = ClientSettings(reconnect_backoff=PACED, connect_timeout=WAIT, retry_timeout=WAIT)
        attempts: list[int] = []
        started: list[float] = []
        cluster = Cluster(
            f"127.0.0.1:{port}", settings, connect=counting_connect(settings, attempts, started)
        )
        failures: list[BaseException] = []

        def go_on() -> bool:
            return len(attempts) < 6

        try:
            await asyncio.wait_for(
                asyncio.gather(*(keep_calling(cluster, failures, go_on) for _ in range(3))), WAIT
            )
        finally:
            await cluster.close()
    # Each attempt waits out the broker's backoff after the failure before it: at least 8 ms
    # (10 ms less 20% jitter), doubling; spinning callers connected back to back. (A lower
    # bound: a loaded machine only makes the gaps longer.)
    gaps = [later - earlier for earlier, later in itertools.pairwise(started)]
    assert all(gap >= PACED.initial * 0.8 for gap in gaps), gaps
    assert len(failures) <= 3 * len(attempts)
    # Every failure is a retriable ConnectError naming the address (garbage included).
    assert all(isinstance(f, ConnectError) and f"127.0.0.1:{port}" in str(f) for f in failures)


async def test_a_silent_bootstrap_broker_is_bounded_by_the_connect_timeout() -> None:
    async with SilentServer() as server:
        cluster = Cluster(f"127.0.0.1:{server.port}", reconnect_backoff=PACED, connect_timeout=0.05)
        failures: list[BaseException] = []
        try:
            until = time.monotonic() + WINDOW
            await keep_calling(cluster, failures, lambda: time.monotonic() < until)
        finally:
            await cluster.close()
    assert 1 <= server.accepted <= WINDOW / 0.05 + 1
    assert all(isinstance(f, ConnectError) and "ApiVersions took over" in str(f) for f in failures)


async def test_a_leader_that_comes_back_is_used_again_with_one_warning_and_one_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="kafkawire")
    async with FakeCluster(1) as fake:
        fake.create_topic("t")
        fake.produce("t", 0, [b"v"] * 5)
        fake.control(hold_the_first, api_key="Fetch")  # a long poll, until the broker goes
        address = fake.address(0)
        # Each failing call below fails at its first refused connect; its time only has to
        # outlast a loaded machine's slow turn (0.2 s did not, once: a timeout, not the refusal).
        cluster = Cluster(address, reconnect_backoff=TINY, retry_timeout=2.0)
        await cluster.__aenter__()
        try:
            await cluster.send(offsets_of(0))
            polling = asyncio.create_task(cluster.send(long_poll(10_000), retry=False))
            # The Fetch itself, not only its connection: a broker gone during the connection's
            # ApiVersions fails the connect instead (a loaded machine got there).
            await fake.requests.wait_for("Fetch", timeout=WAIT)
            caplog.clear()
            await fake.stop_broker(0)
            with pytest.raises(ConnectionClosedError):  # it was in flight as the broker went
                await asyncio.wait_for(polling, WAIT)
            for _ in range(50):  # the broker is gone: every call fails, after its backoff
                with pytest.raises(ConnectError):
                    await asyncio.wait_for(cluster.send(offsets_of(0), retry=False), WAIT)
            await fake.start_broker(0)
            response = await asyncio.wait_for(cluster.send(offsets_of(0)), WAIT)
            assert response.topics[0].partitions[0].offset == 5
        finally:
            await cluster.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert f"broker 0 ({address}) is unreachable: " in warnings[0]
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any(f"broker 0 ({address}) is reachable again" in m for m in infos), infos
    debug = [r.getMessage() for r in caplog.records if "still unreachable" in r.getMessage()]
    assert len(debug) > 10


def test_warnings_repeat_once_per_interval_saying_how_many_were_left_out(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = StoppedClock()  # the interval on real time was passed by a loaded machine
    monkeypatch.setattr(_health, "time", clock)
    pool = ConnectionPool(never_connects, TINY, warn_interval=0.05)
    caplog.set_level(logging.DEBUG, logger="kafkawire.cluster")
    for _ in range(3):
        pool.failed(("127.0.0.1", 9), "refused")
    clock.now += 0.06
    pool.failed(("127.0.0.1", 9), "refused")
    pool.answered(("127.0.0.1", 9))
    pool.failed(("127.0.0.1", 9), "refused again")  # within the interval: not warned of
    levels = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in levels] == [
        logging.WARNING,
        logging.DEBUG,
        logging.DEBUG,
        logging.WARNING,
        logging.INFO,
        logging.DEBUG,
    ]
    assert levels[0][1].startswith("bootstrap address 127.0.0.1:9 is unreachable: refused")
    assert "(2 more failures since the last warning)" in levels[3][1]
    assert "reachable again, after 4 failures" in levels[4][1]


async def test_close_ends_a_call_waiting_out_a_brokers_backoff() -> None:
    cluster = Cluster(f"127.0.0.1:{free_port()}", reconnect_backoff=Backoff(30, 30))
    with pytest.raises(ConnectError):
        await asyncio.wait_for(cluster.metadata(), WAIT)
    waiting = asyncio.create_task(cluster.metadata())  # the next connect is 24-30 s away
    await asyncio.sleep(0.05)
    assert not waiting.done()
    await cluster.close()
    with pytest.raises(ClientClosedError):
        await asyncio.wait_for(waiting, WAIT)
