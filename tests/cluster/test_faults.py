"""The cluster layer against failing brokers (all in-process, loopback only): the fake
cluster with fault hooks (kafkawire.testing.fake.faults), and silent sockets (hostile.py).

Each test failed before the change it covers: a long poll stalling other requests, a silent
broker chosen again and again, unusable addresses, unbounded calls, a request the broker
refuses by closing, partitions that do not exist, and close() that did not close.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from kafkawire.cluster import (
    Backoff,
    CallTimeoutError,
    Cluster,
    InvalidPartitionError,
    RequestRefusedError,
)
from kafkawire.errors import ClientClosedError, EventLoopError, UnknownTopicOrPartitionError
from kafkawire.messages.fetch import v12 as fetch
from kafkawire.messages.list_offsets import v7 as list_offsets
from kafkawire.messages.produce import v9 as produce
from kafkawire.net.errors import ConnectError, RequestTimeoutError
from kafkawire.records import RecordBatchBuilder
from kafkawire.testing.fake import CUT, DROP, FakeCluster, HookContext
from kafkawire.testing.fake.faults import leave_out_topic, metadata_brokers
from tests.fake.late_topic import LateTopic
from tests.net.fakebroker import WAIT

from .hostile import SilentServer

FAST = Backoff(initial=0.01, maximum=0.02)


def offsets_of(partition: int, topic: str = "t") -> list_offsets.ListOffsetsRequest:
    wanted = list_offsets.ListOffsetsPartition(partition_index=partition, timestamp=-1)
    return list_offsets.ListOffsetsRequest(
        topics=(list_offsets.ListOffsetsTopic(name=topic, partitions=(wanted,)),)
    )


def long_poll(max_wait_ms: int) -> fetch.FetchRequest:
    partition = fetch.FetchPartition(partition=0, partition_max_bytes=1024)
    return fetch.FetchRequest(
        max_wait_ms=max_wait_ms, topics=(fetch.FetchTopic(topic="t", partitions=(partition,)),)
    )


def produce_to_t() -> produce.ProduceRequest:
    builder = RecordBatchBuilder()
    builder.append(None, b"v", timestamp=1)
    partition = produce.PartitionProduceData(index=0, records=builder.build())
    topic = produce.TopicProduceData(name="t", partition_data=(partition,))
    return produce.ProduceRequest(acks=1, timeout_ms=1000, topic_data=(topic,))


async def hold_the_first(request: Any, ctx: HookContext) -> None:
    """Hold the first request it meets for good (the next ones go on to the handler)."""
    ctx.remove()
    await ctx.hold(asyncio.Event().wait())


def drop_on_node(node_id: int) -> Any:
    """A hook that never answers the requests broker ``node_id`` gets."""

    def drop(request: Any, ctx: HookContext) -> Any:
        return DROP if ctx.node_id == node_id else None

    return drop


async def test_a_long_poll_does_not_stall_produce_or_metadata() -> None:
    async with FakeCluster(1) as fake:
        fake.create_topic("t", 3)
        fake.control(hold_the_first, api_key="Fetch")  # as a broker holds a long poll
        async with Cluster(fake.bootstrap) as cluster:
            await stalled_by_nothing(fake, cluster)
        # Connections: bootstrap/normal, fetch, produce, then a second fetch.
        assert len({r.connection_id for r in fake.requests}) == 4


async def stalled_by_nothing(fake: FakeCluster, cluster: Cluster) -> None:
    poll = asyncio.create_task(cluster.send(long_poll(10_000)))
    await fake.requests.wait_for("Fetch")
    # Each answered while the broker still holds the fetch (on a connection of its own).
    await asyncio.wait_for(cluster.send(produce_to_t()), WAIT)
    await asyncio.wait_for(cluster.send(offsets_of(0)), WAIT)
    await asyncio.wait_for(cluster.refresh_metadata(), WAIT)
    assert not poll.done()
    # A cancelled long poll drops its connection: the next fetch does not queue behind it.
    poll.cancel()
    with pytest.raises(asyncio.CancelledError):
        await poll
    await asyncio.wait_for(cluster.send(long_poll(0)), WAIT)


async def test_a_silent_broker_is_not_chosen_again_for_any_broker_requests() -> None:
    async with FakeCluster(2) as fake:
        # Broker 1 answers ApiVersions but not Metadata, its socket open.
        fake.control(drop_on_node(1), api_key="Metadata", keep=True)
        async with Cluster(fake.address(0), request_timeout=0.2, backoff=FAST) as cluster:
            for _ in range(20):
                cluster.mark_metadata_stale()
                await asyncio.wait_for(cluster.metadata(), WAIT)
        assert len(fake.requests.of("Metadata", node_id=1)) <= 1
        assert len(fake.requests.of("Metadata", node_id=0)) >= 20


async def test_unusable_broker_addresses_are_connect_failures_of_their_node() -> None:
    bad = ((2, "127.0.0.1", 70000), (3, "127.0.0.1", -1), (4, "a\x00b", 9092), (5, "a" * 70, 1))
    async with FakeCluster(1) as fake:
        fake.control(metadata_brokers(bad), api_key="Metadata", keep=True)
        async with Cluster(fake.bootstrap, connect_timeout=1, backoff=FAST) as cluster:
            for node, _, _ in bad:
                with pytest.raises(ConnectError, match=f"broker {node} .*unusable address"):
                    await cluster.connection(node)
            # The search for a broker that answers goes past them, whatever the order.
            for _ in range(10):
                cluster.mark_metadata_stale()
                assert 0 in (await cluster.metadata()).brokers


async def test_retry_timeout_bounds_the_search_for_a_broker() -> None:
    servers = [SilentServer() for _ in range(30)]
    for server in servers:
        await server.__aenter__()
    try:
        bootstrap = [f"127.0.0.1:{s.port}" for s in servers]
        cluster = Cluster(bootstrap, connect_timeout=0.2, retry_timeout=1.0)
        # 30 brokers at 0.2 s each would take 6 s; the call must end at its 1 s budget.
        with pytest.raises(RequestTimeoutError, match=r"Metadata: no answer within (1|0\.9\d*) s"):
            await asyncio.wait_for(cluster.metadata(), 3.0)
        await cluster.close()
    finally:
        for server in servers:
            await server.__aexit__()


async def test_a_request_answered_by_closing_twice_is_refused(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(lambda request, ctx: CUT, api_key="ListOffsets", keep=True)
    async with Cluster(fake_cluster.bootstrap, backoff=FAST) as cluster:
        with pytest.raises(RequestRefusedError, match="ListOffsetsRequest v7 2 times"):
            await asyncio.wait_for(cluster.send(offsets_of(0)), WAIT)
    assert len(fake_cluster.requests.of("ListOffsets")) == 2


@pytest.mark.parametrize("partition", [7, 3, -1])
async def test_a_partition_the_topic_lacks_fails_at_once(
    fake_cluster: FakeCluster, partition: int
) -> None:
    fake_cluster.create_topic("t", 3)
    async with Cluster(fake_cluster.bootstrap) as cluster:
        with pytest.raises(
            InvalidPartitionError,
            match=f"topic 't' has 3 partitions \\(0-2\\): partition {partition} does not exist",
        ):
            await asyncio.wait_for(cluster.send(offsets_of(partition)), WAIT)
    assert fake_cluster.requests.of("ListOffsets") == []


async def test_an_unknown_topic_is_waited_for_with_one_warning(
    fake_cluster: FakeCluster, caplog: pytest.LogCaptureFixture
) -> None:
    """A topic left out of the Metadata answers (not named with an error: nothing to read but
    its absence)."""
    fake_cluster.control(leave_out_topic("nope"), api_key="Metadata", keep=True)
    async with Cluster(fake_cluster.bootstrap, retry_timeout=0.3, backoff=FAST) as cluster:
        with (
            caplog.at_level(logging.DEBUG, logger="kafkawire.cluster"),
            # The call ends at its deadline with one error naming the last one met, whether
            # the deadline passed in an attempt or between two.
            pytest.raises(
                CallTimeoutError, match="last error: UNKNOWN_TOPIC_OR_PARTITION"
            ) as caught,
        ):
            await asyncio.wait_for(cluster.send(offsets_of(0, topic="nope")), WAIT)
    assert isinstance(caught.value.__cause__, UnknownTopicOrPartitionError)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "topic 'nope' is not in the metadata" in warnings[0].getMessage()
    asked = fake_cluster.requests.of("Metadata")
    assert len([r for r in asked if r.request.topics]) >= 2  # it asked again (how often: load)


async def test_a_topic_that_comes_while_waited_for_is_used_with_one_warning(
    fake_cluster: FakeCluster, caplog: pytest.LogCaptureFixture
) -> None:
    """As Kafka answers a topic it does not have (UNKNOWN_TOPIC_OR_PARTITION): the client asks
    until it is there (asks counted, not timed: tests/fake/late_topic.py), warning once."""
    late = LateTopic(fake_cluster, "late")
    caplog.set_level(logging.DEBUG, logger="kafkawire.cluster")
    async with Cluster(fake_cluster.bootstrap, retry_timeout=WAIT, backoff=FAST) as cluster:
        await asyncio.wait_for(cluster.send(offsets_of(0, topic="late")), WAIT)
    assert late.asked >= late.after
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "UNKNOWN_TOPIC_OR_PARTITION (3): metadata for topic 'late'" in warnings[0]


async def test_a_request_cut_by_its_calls_deadline_closes_its_connection(
    fake_cluster: FakeCluster,
) -> None:
    """A request the call's deadline cuts before its own ``request_timeout`` timed out all the
    same: its connection closes (as Java's NetworkClient disconnects on a request timeout), so
    the next request does not queue behind one the broker may never answer."""
    fake_cluster.create_topic("t")
    fake_cluster.control(lambda request, ctx: DROP, api_key="ListOffsets")
    async with Cluster(
        fake_cluster.bootstrap, backoff=FAST, request_timeout=WAIT, retry_timeout=0.3
    ) as cluster:
        with pytest.raises(CallTimeoutError):
            await asyncio.wait_for(cluster.send(offsets_of(0)), WAIT)
        await asyncio.wait_for(cluster.send(offsets_of(0)), WAIT)  # answered: the hook was once
    first, second = fake_cluster.requests.of("ListOffsets")
    assert first.connection_id != second.connection_id


async def test_close_ends_calls_in_flight_and_nothing_reconnects() -> None:
    async with FakeCluster(1) as fake:
        fake.create_topic("t")
        fake.control(lambda request, ctx: DROP, api_key="ListOffsets", keep=True)
        cluster = Cluster(fake.bootstrap)
        await cluster.__aenter__()
        in_flight = asyncio.create_task(cluster.send(offsets_of(0)))
        await fake.requests.wait_for("ListOffsets")
        await cluster.close()
        with pytest.raises(ClientClosedError):
            await asyncio.wait_for(in_flight, WAIT)
        with pytest.raises(ClientClosedError):
            await cluster.send(offsets_of(0))
        with pytest.raises(ClientClosedError):
            await cluster.metadata(["other"])
        # Nothing is left that could connect again, and nothing did.
        assert not _kafkawire_tasks()
        assert len({r.connection_id for r in fake.requests}) == 1


async def test_close_ends_a_call_that_is_connecting() -> None:
    async with SilentServer() as silent:
        connecting = Cluster(f"127.0.0.1:{silent.port}", connect_timeout=30)
        call = asyncio.create_task(connecting.metadata())
        await asyncio.wait_for(silent.accepting.wait(), WAIT)
        await connecting.close()
        with pytest.raises(ClientClosedError):
            await asyncio.wait_for(call, WAIT)
    assert not _kafkawire_tasks()


async def test_close_ends_a_call_that_is_backing_off(
    fake_cluster: FakeCluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="kafkawire.cluster")
    fake_cluster.create_topic("t")
    # ListOffsets goes unanswered: it times out, and the retry waits out a long backoff.
    # (A request timeout long enough for the bootstrap on a busy machine.)
    fake_cluster.control(lambda request, ctx: DROP, api_key="ListOffsets", keep=True)
    backing_off = Cluster(
        fake_cluster.bootstrap, request_timeout=0.3, backoff=Backoff(initial=30, maximum=30)
    )
    await backing_off.__aenter__()
    call = asyncio.create_task(backing_off.send(offsets_of(0)))
    async with asyncio.timeout(WAIT):  # until the retry says it backs off
        while not any(r.getMessage().startswith("retrying") for r in caplog.records):
            await asyncio.sleep(0.01)
    await backing_off.close()
    with pytest.raises(ClientClosedError):
        await asyncio.wait_for(call, WAIT)
    assert len(fake_cluster.requests.of("ListOffsets")) == 1  # the retry never went
    assert not _kafkawire_tasks()


async def test_a_cluster_used_from_another_event_loop_says_so_at_once(
    fake_cluster: FakeCluster,
) -> None:
    async with Cluster(fake_cluster.bootstrap) as cluster:
        error: list[BaseException] = []

        def elsewhere() -> None:
            try:
                asyncio.run(cluster.metadata())
            except BaseException as exc:
                error.append(exc)

        await asyncio.to_thread(elsewhere)
        assert isinstance(error[0], EventLoopError)
        assert "another event loop" in str(error[0])


def _kafkawire_tasks() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("kafkawire")]


async def test_a_cancellation_arriving_as_close_ends_a_backoff_is_not_swallowed() -> None:
    # asyncio.wait_for on Python 3.11 returned normally here, as if not cancelled.
    cluster = Cluster("127.0.0.1:1")
    backing_off = asyncio.create_task(cluster._retries.sleep(30))
    await asyncio.sleep(0)
    cluster._retries.close()
    backing_off.cancel()
    with pytest.raises(asyncio.CancelledError):
        await backing_off
