"""The fetcher on the fake cluster: errors a real broker rarely shows on demand, scripted by
the fake's hooks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.errors import ClientClosedError, TopicAuthorizationFailedError
from kafkawire.net.errors import RequestTimeoutError
from kafkawire.producer import Producer
from kafkawire.records import Compression, DecompressionLimitError, RecordBatchBuilder
from kafkawire.testing.fake import DROP, FakeCluster, HookContext
from kafkawire.testing.fake.faults import answer_partitions, hold
from tests.fake.wire import commit_then_abort

T0 = TopicPartition("t", 0)
WAIT = 10  # the bound on every wait: a test must fail, not hang


def values(start: int, count: int) -> list[bytes]:
    return [b"%d" % offset for offset in range(start, start + count)]


async def test_a_leader_that_moved_is_found_again(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, values(0, 13))
    fake_cluster.control(answer_partitions(6), api_key="Fetch")  # NOT_LEADER_OR_FOLLOWER, once
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap, retry_backoff_ms=1) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 10)
        got = await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), WAIT)
        refused = fake_cluster.requests.of("Fetch")[0]
    assert [r.value for r in got[T0]] == [b"10", b"11", b"12"]
    after = fake_cluster.requests[fake_cluster.requests.index(refused) :]
    assert any(r.api_name == "Metadata" for r in after)  # asked again after the error


async def test_a_fatal_partition_error_reaches_the_application(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(answer_partitions(29), api_key="Fetch", keep=True)
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 0)
        with pytest.raises(TopicAuthorizationFailedError, match="t/0 at offset 0"):
            await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), WAIT)


async def test_the_decompression_bound_per_fetch(fake_cluster: FakeCluster) -> None:
    bomb = RecordBatchBuilder(compression=Compression.GZIP)
    bomb.append(None, bytes(2_000_000), timestamp=1)
    fake_cluster.create_topic("t")
    fake_cluster.write_batches("t", 0, bomb.build())
    async with Consumer(
        bootstrap_servers=fake_cluster.bootstrap, max_decompressed_bytes_per_fetch=1_000_000
    ) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 0)
        with pytest.raises(DecompressionLimitError, match="max_decompressed_bytes_per_fetch"):
            await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), WAIT)
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 0)
        got = await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), WAIT)
        assert len(got[T0][0].value) == 2_000_000  # within the default bound


async def test_offsets_for_times_asks_each_leader_once() -> None:
    async with FakeCluster(1) as cluster:
        cluster.create_topic("t", 3)
        for p in range(3):
            cluster.produce("t", p, [b"before"], timestamp=500)
            cluster.produce("t", p, [b"at"], timestamp=1234)
        async with Consumer(bootstrap_servers=cluster.bootstrap) as consumer:
            found = await consumer.offsets_for_times(
                {TopicPartition("t", p): 1000 + p for p in range(3)}
            )
        asked = [r.request for r in cluster.requests.of("ListOffsets")]
    assert len(asked) == 1
    assert [p.timestamp for p in asked[0].topics[0].partitions] == [1000, 1001, 1002]
    assert {tp: (f.offset, f.timestamp) for tp, f in found.items() if f} == {
        TopicPartition("t", p): (1, 1234) for p in range(3)
    }


async def test_a_seek_drops_data_fetched_before_it(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, values(0, 50))
    fake_cluster.produce("t", 0, values(50, 2))
    release = asyncio.Event()

    async def from_zero_after_the_seek(request: Any, ctx: HookContext) -> None:
        if request.topics[0].partitions[0].fetch_offset == 0:
            await ctx.hold(release.wait())  # answered, with offsets 0-51, after the seek
        ctx.remove()

    fake_cluster.control(from_zero_after_the_seek, api_key="Fetch")
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 0)
        await fake_cluster.requests.wait_for("Fetch", timeout=WAIT)  # the fetch from 0 is out
        consumer.seek(T0, 50)
        release.set()
        got = await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), WAIT)
    assert [r.offset for r in got[T0]] == [50, 51]


async def test_close_while_a_fetch_is_held_returns_promptly(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(lambda request, ctx: DROP, api_key="Fetch", keep=True)  # never answered
    consumer = Consumer(bootstrap_servers=fake_cluster.bootstrap, fetch_max_wait_ms=600_000)
    await consumer.start()
    consumer.assign([T0])
    consumer.seek(T0, 0)
    waiting = asyncio.ensure_future(consumer.getmany(timeout_ms=600_000))
    await fake_cluster.requests.wait_for("Fetch", timeout=WAIT)
    await asyncio.wait_for(consumer.close(), WAIT)
    with pytest.raises(ClientClosedError):
        await asyncio.wait_for(waiting, WAIT)


@pytest.mark.parametrize(
    ("isolation_level", "expected"),
    [("read_committed", [b"kept"]), ("read_uncommitted", [b"kept", b"dropped"])],
)
async def test_read_committed_drops_aborted_records_and_hides_markers(
    fake_cluster: FakeCluster, isolation_level: Any, expected: list[bytes]
) -> None:
    """Neither embedded broker lists aborted transactions in Fetch: shown here. Offsets 0-3:
    "kept" committed, its marker, "dropped" aborted, its marker."""
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, transactional_id="writer") as producer:
        await commit_then_abort(producer, "t")
    async with Consumer(
        bootstrap_servers=fake_cluster.bootstrap, isolation_level=isolation_level
    ) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 0)
        got = await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), WAIT)
        assert [r.value for r in got[T0]] == expected
        await consumer.getmany(timeout_ms=100)  # the trailing marker moves the position on
        assert await consumer.position(T0) == 4


async def test_a_position_that_cannot_be_found_times_out_and_a_close_ends_the_wait(
    fake_cluster: FakeCluster,
) -> None:
    """Java's ``position(tp, timeout)``: a reset whose ListOffsets is never answered ends in a
    timeout naming the partition, not a wait for ever; a close ends a waiting call too."""
    fake_cluster.create_topic("t")
    fake_cluster.control(lambda request, ctx: DROP, api_key="ListOffsets", keep=True)
    consumer = Consumer(bootstrap_servers=fake_cluster.bootstrap, request_timeout_ms=60_000)
    await consumer.start()
    consumer.assign([T0])  # no position: the reset policy must look it up
    with pytest.raises(RequestTimeoutError, match="position of t/0 was not known within 200"):
        await asyncio.wait_for(consumer.position(T0, timeout_ms=200), WAIT)
    waiting = asyncio.ensure_future(consumer.position(T0))
    await asyncio.sleep(0.05)
    await asyncio.wait_for(consumer.close(), WAIT)
    with pytest.raises(ClientClosedError):
        await asyncio.wait_for(waiting, WAIT)


async def test_a_position_is_awaited_on_the_partition_not_on_a_clock(
    fake_cluster: FakeCluster,
) -> None:
    """``position`` sleeps until the partition has a position (or an error or a close comes):
    it does not look again and again while the reset's ListOffsets is out."""
    fake_cluster.create_topic("t")
    fake_cluster.produce("t", 0, values(0, 4))
    fake_cluster.delete_records("t", 0, 4)  # the earliest offset is 4
    answer = asyncio.Event()
    fake_cluster.control(hold(answer.wait), api_key="ListOffsets")
    async with Consumer(
        bootstrap_servers=fake_cluster.bootstrap, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([T0])
        looks = 0
        real = consumer._subscriptions.state

        def state(tp: TopicPartition) -> Any:
            nonlocal looks
            looks += 1
            return real(tp)

        consumer._subscriptions.state = state  # type: ignore[method-assign]
        waiting = asyncio.ensure_future(consumer.position(T0))
        await fake_cluster.requests.wait_for("ListOffsets", timeout=WAIT)
        before = looks
        await asyncio.sleep(0.2)  # the broker takes its time: a poll every 10 ms looks 20 times
        looked_meanwhile = looks - before
        answer.set()
        assert await asyncio.wait_for(waiting, WAIT) == 4
    assert looked_meanwhile <= 1
