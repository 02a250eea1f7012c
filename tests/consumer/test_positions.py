"""Positions on the fake cluster with crafted logs (``FakeCluster.write_batches``): no record
handed out is lost or repeated, whatever the batches say, and what cannot be read stops the
reading where it is (Kafka's Java ``CompletedFetch`` and ``FetchCollector`` rules)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from kafkawire.consumer import Consumer, ConsumerRecord, RecordDeserializationError, TopicPartition
from kafkawire.consumer.fetching.record import consumer_records
from kafkawire.records import (
    Compression,
    CorruptRecordError,
    DecompressionLimitError,
    RecordBatchBuilder,
    decode_batches,
)
from kafkawire.records.batch_v2 import encode_batch
from kafkawire.records.v2_records import encode_record
from kafkawire.records.varint import small_varints
from kafkawire.testing.fake import FakeCluster, HookContext

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
FAST = {"retry_backoff_ms": 1, "fetch_max_wait_ms": 20}
WAIT = 10  # the bound on every wait: a test must fail, not hang


def batch(base: int, count: int) -> bytes:
    """A plain v2 batch of ``count`` records at ``base``, values ``b"<offset>"``."""
    builder = RecordBatchBuilder(base_offset=base)
    for i in range(count):
        builder.append(None, b"%d" % (base + i), timestamp=1)
    return builder.build()


def crafted_batch(
    base: int, deltas: Sequence[int], *, last_offset_delta: int | None = None
) -> bytes:
    """A v2 batch whose records have the offset ``deltas`` given (repeated or out of order if
    a test wants), values ``b"<offset>"``, and ``last_offset_delta`` as given (by default the
    last delta, as a sound batch has): what no producer path of the fake writes."""
    small = small_varints()
    records = b"".join(
        encode_record(d, 0, None, b"%d" % (base + d), headers=(), small=small) for d in deltas
    )
    return encode_batch(
        records,
        count=len(deltas),
        compression=Compression.NONE,
        compression_level=None,
        attributes=0,
        base_offset=base,
        partition_leader_epoch=-1,
        last_offset_delta=deltas[-1] if last_offset_delta is None else last_offset_delta,
        base_timestamp=1,
        max_timestamp=1,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
    )


@pytest.fixture
async def leader() -> AsyncIterator[FakeCluster]:
    """A cluster of one broker: it leads every partition, so one Fetch answers them all."""
    async with FakeCluster(1) as cluster:
        yield cluster


def with_logs(cluster: FakeCluster, logs: dict[int, list[bytes]]) -> None:
    """Topic ``t`` with the partitions ``logs`` names, holding those batches."""
    cluster.create_topic("t", max(logs, default=0) + 1)
    for partition, batches in logs.items():
        cluster.write_batches("t", partition, *batches)


def fetched(cluster: FakeCluster) -> list[tuple[int, int]]:
    """(partition, fetch offset) of every partition every Fetch named."""
    return [
        (p.partition, p.fetch_offset)
        for r in cluster.requests.of("Fetch")
        for t in r.request.topics
        for p in t.partitions
    ]


def whole_log(cluster: FakeCluster) -> Any:
    """A Fetch hook: every partition answered with its whole log, whatever the fetch offset (a
    broker that answers batches below the position)."""

    async def answer(request: Any, ctx: HookContext) -> Any:
        response = await ctx.handle()
        log = cluster.state.partition("t", 0)
        assert log is not None
        records = b"".join(stored.data for stored in log.log.batches)
        return dataclasses.replace(
            response,
            responses=tuple(
                dataclasses.replace(
                    topic,
                    partitions=tuple(
                        dataclasses.replace(p, records=records) for p in topic.partitions
                    ),
                )
                for topic in response.responses
            ),
        )

    return answer


def unasked_partition(partition: int) -> Any:
    """A Fetch hook: the handler's answer, naming ``partition`` too (not asked for)."""

    async def answer(request: Any, ctx: HookContext) -> Any:
        response = await ctx.handle()
        topic = response.responses[0] if response.responses else None
        if topic is None:
            return response
        extra = dataclasses.replace(topic.partitions[0], partition_index=partition, records=None)
        return dataclasses.replace(
            response,
            responses=(dataclasses.replace(topic, partitions=(*topic.partitions, extra)),),
        )

    return answer


async def poll(consumer: Consumer, count: int, **getmany: Any) -> list[ConsumerRecord]:
    """What ``count`` calls of ``getmany`` return, in order."""
    got: list[ConsumerRecord] = []
    for _ in range(count):
        for records in (await consumer.getmany(timeout_ms=100, **getmany)).values():
            got += records
    return got


def offsets(records: list[ConsumerRecord]) -> list[tuple[int, int]]:
    return [(r.partition, r.offset) for r in records]


@pytest.mark.parametrize(
    ("log", "from_any_offset", "expected"),
    [
        # A batch whose header says it ends at offset 0, with records 0-2, last in its answer.
        ([crafted_batch(0, [0, 1, 2], last_offset_delta=0)], False, range(3)),
        # An offset repeated within a batch.
        ([crafted_batch(0, [0, 1, 1, 2]), batch(3, 1)], False, range(4)),
        # A broker that answers batches below the fetch position (the whole log each time).
        ([batch(0, 3), batch(3, 3)], True, range(6)),
    ],
    ids=["last_offset_delta-too-small", "repeated-offset", "batch-below-the-position"],
)
async def test_positions_only_move_forward(
    log: list[bytes], from_any_offset: bool, expected: range
) -> None:
    # Without fetch sessions every answer names the partition, so the hook can fill it.
    async with FakeCluster(1, fetch_session_cache_slots=0) as cluster:
        with_logs(cluster, {0: log})
        if from_any_offset:
            cluster.control(whole_log(cluster), api_key="Fetch", keep=True)
        async with Consumer(bootstrap_servers=cluster.bootstrap, **FAST) as consumer:
            consumer.assign([T0])
            consumer.seek(T0, 0)
            got = await poll(consumer, 8)
            position = await consumer.position(T0)
        asked = fetched(cluster)
    assert [r.offset for r in got] == list(expected)  # each once, in order
    assert [r.value for r in got] == [b"%d" % o for o in expected]
    assert position == expected[-1] + 1
    assert all(offset >= 0 for _, offset in asked)
    assert max(o for _, o in asked) == expected[-1] + 1


def failing_on(bad: bytes) -> Any:
    def deserialize(value: bytes | None) -> bytes | None:
        if value == bad:
            raise ValueError(f"cannot read {value!r}")
        return value

    return deserialize


async def test_a_deserializer_error_comes_after_the_records_before_it(
    leader: FakeCluster,
) -> None:
    """Java's rule: the records before the bad one are returned; the next poll raises
    RecordDeserializationException naming the partition and offset, the position at it, and so
    does every poll until the application seeks past it."""
    with_logs(leader, {0: [batch(0, 5)], 1: [batch(0, 2)]})
    async with Consumer(
        bootstrap_servers=leader.bootstrap, value_deserializer=failing_on(b"2"), **FAST
    ) as consumer:
        consumer.assign([T0, T1])
        for tp in (T0, T1):
            consumer.seek(tp, 0)
        got: list[ConsumerRecord] = []
        while not got:
            got = await poll(consumer, 1)
        errors = []
        for _ in range(2):
            with pytest.raises(RecordDeserializationError) as caught:
                got += await poll(consumer, 1)
            errors.append(caught.value)
            assert await consumer.position(T0) == 2
        consumer.seek(T0, errors[-1].offset + 1)
        got += await poll(consumer, 4)
    assert (0, 2) not in offsets(got)
    assert sorted(offsets(got)) == [(0, 0), (0, 1), (0, 3), (0, 4), (1, 0), (1, 1)]
    error = errors[0]
    assert (error.partition, error.offset, error.origin) == (T0, 2, "value")
    assert isinstance(error.__cause__, ValueError)
    assert "t/0 at offset 2" in str(error)
    assert "seek to offset 3" in str(error)


async def test_a_batch_past_the_decompression_bound_comes_after_the_records_before_it(
    leader: FakeCluster,
) -> None:
    """Records drained before the batch, of every partition, are handed out; the error names
    the partition, the offset and the option."""
    bomb = RecordBatchBuilder(base_offset=2, compression=Compression.GZIP)
    bomb.append(None, bytes(2_000_000), timestamp=1)
    with_logs(leader, {0: [batch(0, 3)], 1: [batch(0, 2), bomb.build(), batch(3, 1)]})
    async with Consumer(
        bootstrap_servers=leader.bootstrap, max_decompressed_bytes_per_fetch=100_000, **FAST
    ) as consumer:
        consumer.assign([T0, T1])
        for tp in (T0, T1):
            consumer.seek(tp, 0)
        got: list[ConsumerRecord] = []
        while len(got) < 5:
            got += await poll(consumer, 1)
        with pytest.raises(DecompressionLimitError) as caught:
            await poll(consumer, 1)
        assert await consumer.position(T1) == 2
        consumer.seek(T1, 3)
        got += await poll(consumer, 4)
    assert sorted(offsets(got)) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 3)]
    message = str(caught.value)
    assert "t/1 at offset 2" in message
    assert "max_decompressed_bytes_per_fetch (100000)" in message
    assert "max_total_decompressed_size" not in message  # an internal parameter
    assert "seek to offset 3 to skip it" in message


async def test_a_corrupt_batch_comes_after_the_records_before_it(leader: FakeCluster) -> None:
    corrupt = bytearray(batch(2, 2))
    corrupt[corrupt.rindex(b"3")] = ord("9")  # a value changed: the crc no longer matches
    with_logs(leader, {0: [batch(0, 2), bytes(corrupt)]})
    async with Consumer(bootstrap_servers=leader.bootstrap, **FAST) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 0)
        got: list[ConsumerRecord] = []
        async with asyncio.timeout(WAIT):
            while len(got) < 2:  # a loaded machine may answer after a call's 100 ms
                got += await poll(consumer, 1)
        for _ in range(2):  # until the application seeks
            with pytest.raises(CorruptRecordError, match="t/0 at offset 2: the batch at offset 2"):
                await poll(consumer, 1)
    assert offsets(got) == [(0, 0), (0, 1)]


async def test_an_answer_naming_a_partition_not_asked_for_backs_off_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Dropped as Java drops it; then no fetch until retry_backoff_ms has passed (it went out
    about a thousand times a second), and one warning."""
    async with FakeCluster(1, fetch_session_cache_slots=0) as cluster:
        cluster.create_topic("t", 3)
        cluster.control(unasked_partition(2), api_key="Fetch", keep=True)
        async with Consumer(
            bootstrap_servers=cluster.bootstrap, retry_backoff_ms=60_000, fetch_max_wait_ms=20
        ) as consumer:
            consumer.assign([T0])
            consumer.seek(T0, 0)
            while not cluster.requests.of("Fetch"):
                await consumer.getmany(timeout_ms=20)
            await consumer.getmany(timeout_ms=200)
        assert len(cluster.requests.of("Fetch")) == 1


async def test_a_dropped_answer_is_warned_of_once(caplog: pytest.LogCaptureFixture) -> None:
    async with FakeCluster(1, fetch_session_cache_slots=0) as cluster:
        cluster.create_topic("t", 3)
        cluster.control(unasked_partition(2), api_key="Fetch", keep=True)
        async with Consumer(bootstrap_servers=cluster.bootstrap, **FAST) as consumer:
            consumer.assign([T0])
            consumer.seek(T0, 0)
            with caplog.at_level(logging.DEBUG, logger="kafkawire.consumer.fetching.fetcher"):
                while len(cluster.requests.of("Fetch")) < 3:
                    await consumer.getmany(timeout_ms=20)
    dropped = [r for r in caplog.records if "not asked for" in r.getMessage()]
    assert len(dropped) >= 2
    assert [r.levelno for r in dropped].count(logging.WARNING) == 1


async def test_a_record_never_comes_twice_across_seeks_and_prefetch(
    leader: FakeCluster,
) -> None:
    """Many small batches, prefetched, read a few records at a time."""
    with_logs(leader, {0: [batch(b, 2) for b in range(0, 40, 2)]})
    async with Consumer(bootstrap_servers=leader.bootstrap, **FAST) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 0)
        got: list[ConsumerRecord] = []
        while len(got) < 40:
            got += await asyncio.wait_for(poll(consumer, 1, max_records=3), 10)
    assert [r.offset for r in got] == list(range(40))


@pytest.mark.parametrize("log_append_time", [None, 1_700_000_000_000])
@pytest.mark.parametrize("start", [0, 5, 7, 30])
def test_records_built_from_the_bytes_are_those_built_one_by_one(
    log_append_time: int | None, start: int
) -> None:
    """Without deserializers the records layer builds the consumer's records from the batch
    bytes (in C where it is compiled); with them, one by one from decoded records: the same."""
    builder = RecordBatchBuilder(
        base_offset=5, partition_leader_epoch=4, log_append_time=log_append_time
    )
    for i in range(20):
        builder.append(
            b"k%d" % i if i % 3 else None,
            b"v" * i,
            timestamp=100 + i,
            headers=[("h", b"%d" % i)] if i % 2 else (),
        )
    [decoded] = list(decode_batches(builder.build()))
    [again] = list(decode_batches(builder.build()))
    direct: list[ConsumerRecord] = []
    one_by_one: list[ConsumerRecord] = []
    tp = TopicPartition("t", 2)
    after = consumer_records(
        direct, tp, decoded, start, key_deserializer=None, value_deserializer=None
    )
    same = consumer_records(
        one_by_one, tp, again, start, key_deserializer=None, value_deserializer=lambda v: v
    )
    assert (after, direct) == (same, one_by_one)
    assert [r.offset for r in direct] == list(range(max(start, 5), 25))
    assert all(type(r) is ConsumerRecord and r.leader_epoch == 4 for r in direct)
