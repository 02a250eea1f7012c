"""The fetcher on fake brokers: errors a real broker rarely shows on demand."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.errors import ClientClosedError, TopicAuthorizationFailedError
from kafkawire.net.errors import RequestTimeoutError
from kafkawire.records import (
    Compression,
    ControlType,
    DecompressionLimitError,
    EndTransactionMarker,
    RecordBatchBuilder,
    end_transaction_batch,
)
from tests.cluster.hostile import FakeCluster
from tests.net.fakebroker import FakeClient, messages

from .fake_leader import LIST_OFFSETS, batch, fetch_answer, offsets_answer

T0 = TopicPartition("t", 0)


async def test_a_leader_that_moved_is_found_again() -> None:
    fetches: list[int] = []

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        fetches.append(header.request_api_key)
        if len([k for k in fetches if k == 1]) == 1:
            return fetch_answer(header, request, error=6)  # NOT_LEADER_OR_FOLLOWER
        offset = request.topics[0].partitions[0].fetch_offset
        return fetch_answer(header, request, records=batch(offset, 3))

    async with FakeCluster(1, handler) as brokers:
        async with Consumer(bootstrap_servers=brokers.bootstrap, retry_backoff_ms=1) as consumer:
            consumer.assign([T0])
            consumer.seek(T0, 10)
            got = await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), 10)
        metadata_requests = len(brokers.requests(1, 3))
    assert [r.value for r in got[T0]] == [b"10", b"11", b"12"]
    assert metadata_requests >= 2  # asked again after the error


async def test_a_fatal_partition_error_reaches_the_application() -> None:
    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        return fetch_answer(header, request, error=29)  # TOPIC_AUTHORIZATION_FAILED

    async with (
        FakeCluster(1, handler) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap) as consumer,
    ):
        consumer.assign([T0])
        consumer.seek(T0, 0)
        with pytest.raises(TopicAuthorizationFailedError, match="t/0 at offset 0"):
            await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), 10)


async def test_the_decompression_bound_per_fetch() -> None:
    bomb = RecordBatchBuilder(compression=Compression.GZIP)
    bomb.append(None, bytes(2_000_000), timestamp=1)
    records = bomb.build()

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        return fetch_answer(header, request, records=records)

    async with FakeCluster(1, handler) as brokers:
        async with Consumer(
            bootstrap_servers=brokers.bootstrap, max_decompressed_bytes_per_fetch=1_000_000
        ) as consumer:
            consumer.assign([T0])
            consumer.seek(T0, 0)
            with pytest.raises(DecompressionLimitError, match="max_decompressed_bytes_per_fetch"):
                await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), 10)
        async with Consumer(bootstrap_servers=brokers.bootstrap) as consumer:
            consumer.assign([T0])
            consumer.seek(T0, 0)
            got = await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), 10)
            assert len(got[T0][0].value) == 2_000_000  # within the default bound


async def test_offsets_for_times_asks_each_leader_once() -> None:
    asked: list[Any] = []

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        asked.append(request)
        return offsets_answer(header, request, offset=42, timestamp=1234)

    async with (
        FakeCluster(1, handler, partitions=3) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap) as consumer,
    ):
        found = await consumer.offsets_for_times(
            {TopicPartition("t", p): 1000 + p for p in range(3)}
        )
    assert len(asked) == 1
    assert [p.timestamp for p in asked[0].topics[0].partitions] == [1000, 1001, 1002]
    assert {tp: (f.offset, f.timestamp) for tp, f in found.items() if f} == {
        TopicPartition("t", p): (42, 1234) for p in range(3)
    }


async def test_a_seek_drops_data_fetched_before_it() -> None:
    release = asyncio.Event()

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        offset = request.topics[0].partitions[0].fetch_offset
        if offset == 0:
            await release.wait()  # answered only after the seek
        return fetch_answer(header, request, records=batch(offset, 2))

    async with (
        FakeCluster(1, handler) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap) as consumer,
    ):
        consumer.assign([T0])
        consumer.seek(T0, 0)
        await asyncio.sleep(0.1)  # the fetch from 0 is out
        consumer.seek(T0, 50)
        release.set()
        got = await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), 10)
    assert [r.offset for r in got[T0]] == [50, 51]


async def test_close_while_a_fetch_is_held_returns_promptly() -> None:
    held = asyncio.Event()

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        held.set()
        await asyncio.Event().wait()  # a long poll that never ends

    async with FakeCluster(1, handler) as brokers:
        consumer = Consumer(bootstrap_servers=brokers.bootstrap, fetch_max_wait_ms=600_000)
        await consumer.start()
        consumer.assign([T0])
        consumer.seek(T0, 0)
        waiting = asyncio.ensure_future(consumer.getmany(timeout_ms=600_000))
        await asyncio.wait_for(held.wait(), 10)
        await asyncio.wait_for(consumer.close(), 10)
        with pytest.raises(ClientClosedError):
            await asyncio.wait_for(waiting, 10)


def transactional(base: int, producer_id: int, value: bytes) -> bytes:
    builder = RecordBatchBuilder(
        base_offset=base, producer_id=producer_id, producer_epoch=0, transactional=True
    )
    builder.append(None, value, timestamp=1)
    return builder.build()


def marker(base: int, producer_id: int, kind: ControlType) -> bytes:
    return end_transaction_batch(
        EndTransactionMarker(kind, 0),
        producer_id=producer_id,
        producer_epoch=0,
        timestamp=1,
        base_offset=base,
    )


# Offsets 0-3: producer 7 commits "kept", producer 8 aborts "dropped".
LOG = (
    transactional(0, 7, b"kept")
    + marker(1, 7, ControlType.COMMIT)
    + transactional(2, 8, b"dropped")
    + marker(3, 8, ControlType.ABORT)
)


@pytest.mark.parametrize(
    ("isolation_level", "expected"),
    [("read_committed", [b"kept"]), ("read_uncommitted", [b"kept", b"dropped"])],
)
async def test_read_committed_drops_aborted_records_and_hides_markers(
    isolation_level: Any, expected: list[bytes]
) -> None:
    """Neither embedded broker lists aborted transactions in Fetch: shown here."""

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        answer = fetch_answer(
            header,
            request,
            records=LOG if not request.topics[0].partitions[0].fetch_offset else b"",
        )
        module = messages(1, header.request_api_version)
        data = answer.responses[0].partitions[0]
        aborted = (module.AbortedTransaction(producer_id=8, first_offset=2),)
        if request.isolation_level == 1:
            data = dataclasses.replace(data, aborted_transactions=aborted, last_stable_offset=4)
        topic = dataclasses.replace(answer.responses[0], partitions=(data,))
        return dataclasses.replace(answer, responses=(topic,))

    async with (
        FakeCluster(1, handler) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, isolation_level=isolation_level) as consumer,
    ):
        consumer.assign([T0])
        consumer.seek(T0, 0)
        got = await asyncio.wait_for(consumer.getmany(timeout_ms=10_000), 10)
        assert [r.value for r in got[T0]] == expected
        await consumer.getmany(timeout_ms=100)  # the trailing marker moves the position on
        assert await consumer.position(T0) == 4


async def test_a_position_that_cannot_be_found_times_out_and_a_close_ends_the_wait() -> None:
    """Java's ``position(tp, timeout)``: a reset whose ListOffsets is never answered ends in a
    timeout naming the partition, not a wait for ever; a close ends a waiting call too."""

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        await asyncio.Event().wait()  # ListOffsets (and Fetch) are never answered

    async with FakeCluster(1, handler) as brokers:
        consumer = Consumer(bootstrap_servers=brokers.bootstrap, request_timeout_ms=60_000)
        await consumer.start()
        consumer.assign([T0])  # no position: the reset policy must look it up
        with pytest.raises(RequestTimeoutError, match="position of t/0 was not known within 200"):
            await asyncio.wait_for(consumer.position(T0, timeout_ms=200), 10)
        waiting = asyncio.ensure_future(consumer.position(T0))
        await asyncio.sleep(0.05)
        await asyncio.wait_for(consumer.close(), 10)
        with pytest.raises(ClientClosedError):
            await asyncio.wait_for(waiting, 10)


async def test_a_position_is_awaited_on_the_partition_not_on_a_clock() -> None:
    """``position`` sleeps until the partition has a position (or an error or a close comes):
    it does not look again and again while the reset's ListOffsets is out."""
    asked, answer = asyncio.Event(), asyncio.Event()

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        if header.request_api_key == LIST_OFFSETS:
            asked.set()
            await answer.wait()
            return offsets_answer(header, request, 4)
        await asyncio.Event().wait()  # no Fetch is answered
        return None

    async with (
        FakeCluster(1, handler) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, auto_offset_reset="earliest") as consumer,
    ):
        consumer.assign([T0])
        looks = 0
        real = consumer._subscriptions.state

        def state(tp: TopicPartition) -> Any:
            nonlocal looks
            looks += 1
            return real(tp)

        consumer._subscriptions.state = state  # type: ignore[method-assign]
        waiting = asyncio.ensure_future(consumer.position(T0))
        await asyncio.wait_for(asked.wait(), 10)
        before = looks
        await asyncio.sleep(0.2)  # the broker takes its time: a poll every 10 ms looks 20 times
        looked_meanwhile = looks - before
        answer.set()
        assert await asyncio.wait_for(waiting, 10) == 4
    assert looked_meanwhile <= 1
