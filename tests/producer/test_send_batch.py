"""``send_batch``: many records in one call, partitioned and queued as ``send`` would queue each
one, checked before any is queued, within ``buffer_memory``, and one awaitable for them all
(the first offset per partition, or each record's error)."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pyarrow as pa
import pytest

from kafkawire.client import KafkaClient
from kafkawire.cluster import InvalidPartitionError
from kafkawire.errors import InvalidTopicError
from kafkawire.producer import (
    BufferFullError,
    Producer,
    RecordTooLargeError,
    SendBatchError,
    partition_for_key,
)
from kafkawire.records import Header
from kafkawire.testing import fresh_topic
from kafkawire.testing.fake import CUT, DROP, FakeCluster, HookContext
from kafkawire.testing.fake.faults import answer_partitions
from kafkawire.testing.pytest_plugin import Broker
from tests.net.fakebroker import WAIT

VALUES = [b"value-%04d" % i for i in range(500)]
KEYS = [b"key-%d" % (i % 37) for i in range(500)]


def _values(fake: FakeCluster, topic: str, partition: int) -> list[bytes | None]:
    return [r.value for r in fake.records(topic, partition)]


async def test_each_partition_gets_its_records_in_order_at_the_offsets_given(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t", partitions=3)
    async with Producer(fake_cluster.bootstrap, batch_size=1_000, linger_ms=1) as producer:
        await producer.send("t", b"before", partition=1)
        sent = await asyncio.wait_for(await producer.send_batch("t", VALUES, keys=KEYS), WAIT)
    partitions, offsets = sent.partitions(), sent.offsets()
    for partition in range(3):
        mine = [i for i in range(len(VALUES)) if partitions[i] == partition]
        written = [r for r in fake_cluster.records("t", partition) if r.value != b"before"]
        assert [r.value for r in written] == [VALUES[i] for i in mine]
        assert [r.offset for r in written] == [offsets[i] for i in mine]
        assert sent.first_offsets[partition] == offsets[mine[0]]
    assert sent.first_offsets[1] == 1  # after the record sent before


async def test_records_are_partitioned_as_send_partitions_them(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t", partitions=7)
    keys: list[bytes | None] = [*KEYS[:100], None, None]
    async with Producer(fake_cluster.bootstrap, linger_ms=1) as producer:
        sent = await asyncio.wait_for(await producer.send_batch("t", VALUES[:102], keys=keys), WAIT)
        one_by_one = [
            await asyncio.wait_for(producer.send_and_wait("t", v, k), WAIT)
            for v, k in zip(VALUES[:100], keys, strict=False)
        ]
    assert sent.partitions()[:100] == [m.partition for m in one_by_one]
    assert sent.partitions()[:100] == [partition_for_key(k, 7) for k in KEYS[:100]]


async def test_a_partition_per_record_and_the_producers_partitioner_are_followed(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t", partitions=4)
    chosen = [(i * 3) % 4 for i in range(40)]
    given: list[int | None] = [None if i % 5 == 0 else chosen[i] for i in range(40)]

    def partitioner(topic: str, key: bytes | None, count: int) -> int:
        return 3

    async with Producer(fake_cluster.bootstrap, linger_ms=1, partitioner=partitioner) as producer:
        sent = await asyncio.wait_for(
            await producer.send_batch("t", VALUES[:40], partition=given), WAIT
        )
        arrow = await asyncio.wait_for(
            await producer.send_batch("t", VALUES[:40], partition=pa.array(given, pa.int32())),
            WAIT,
        )
    expected = [3 if p is None else p for p in given]
    assert sent.partitions() == expected
    assert arrow.partitions() == expected


async def test_records_without_keys_stick_to_a_partition_for_about_a_batch(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t", partitions=5)
    async with Producer(fake_cluster.bootstrap, batch_size=2_000, linger_ms=1) as producer:
        sent = await asyncio.wait_for(await producer.send_batch("t", VALUES), WAIT)
    # Each record counts 21 + 10 bytes: a partition takes them until 2,000 have gone to it.
    runs = [len(list(run)) for _, run in itertools.groupby(sent.partitions())]
    assert all(run == 65 for run in runs[:-1])
    assert sum(runs) == len(VALUES)
    assert all(
        a != b for a, b in itertools.pairwise(p for p, _ in itertools.groupby(sent.partitions()))
    )


@pytest.mark.parametrize(
    "values",
    [
        pa.array(VALUES, pa.binary()),
        pa.array([v.decode() for v in VALUES], pa.string()),
        pa.array(VALUES, pa.large_binary()),
        pa.chunked_array([VALUES[:100], VALUES[100:]], pa.binary()),
        pa.array([b"x", *VALUES], pa.binary()).slice(1),
    ],
    ids=["binary", "string", "large_binary", "chunked", "sliced"],
)
async def test_arrow_arrays_are_read_as_they_are(fake_cluster: FakeCluster, values: Any) -> None:
    fake_cluster.create_topic("t")
    keys = pa.array([None if i % 3 else k for i, k in enumerate(KEYS)], pa.binary())
    async with Producer(fake_cluster.bootstrap, linger_ms=1) as producer:
        await asyncio.wait_for(
            await producer.send_batch(
                "t", values, keys=keys, partition=0, timestamps=pa.array(range(500), pa.int64())
            ),
            WAIT,
        )
    written = fake_cluster.records("t", 0)
    assert [r.value for r in written] == VALUES
    assert [r.key for r in written] == keys.to_pylist()
    assert [r.timestamp for r in written] == list(range(500))


async def test_headers_and_timestamps_per_record_are_written(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    headers: list[Any] = [[("a", b"1")], None, [Header("b", None), ("c", b"")]]
    async with Producer(fake_cluster.bootstrap, linger_ms=1) as producer:
        await asyncio.wait_for(
            await producer.send_batch(
                "t", VALUES[:3], partition=0, headers=headers, timestamps=[5, 6, 7]
            ),
            WAIT,
        )
    written = fake_cluster.records("t", 0)
    assert [[(h.key, h.value) for h in r.headers] for r in written] == [
        [("a", b"1")],
        [],
        [("b", None), ("c", b"")],
    ]
    assert [r.timestamp for r in written] == [5, 6, 7]


@pytest.mark.parametrize(
    ("arguments", "error", "match"),
    [
        ({"values": [b"v", "text"]}, TypeError, r"values\[1\] must be bytes"),
        ({"values": [b"v", b"w"], "keys": [b"k"]}, ValueError, "keys has 1 items, not 2"),
        ({"values": [b"v"], "headers": [[("h", 1)]]}, TypeError, "record 0: a record header value"),
        ({"values": [b"v"], "timestamps": ["now"]}, TypeError, r"timestamps\[0\]"),
        ({"values": [b"v"], "partition": 9}, InvalidPartitionError, "partition 9"),
        ({"values": [b"v"], "partition": [True]}, TypeError, r"partition\[0\]"),
        ({"values": [b"v"] * 2 + [b"x" * 3_000]}, RecordTooLargeError, "record 2 is 3021"),
        ({"values": pa.array([1, 2])}, TypeError, "not int64"),
    ],
    ids=["value", "keys", "header", "timestamp", "partition", "bool", "too large", "arrow"],
)
async def test_a_record_that_cannot_be_sent_refuses_the_call_before_any_is_queued(
    fake_cluster: FakeCluster, arguments: dict[str, Any], error: type[Exception], match: str
) -> None:
    fake_cluster.create_topic("t", partitions=2)
    async with Producer(fake_cluster.bootstrap, max_request_size=2_000) as producer:
        values = arguments.pop("values")
        arguments.setdefault("partition", 0)
        with pytest.raises(error, match=match):
            await producer.send_batch("t", values, **arguments)
        with pytest.raises(InvalidTopicError):
            await producer.send_batch("bad topic", [b"v"])
        await producer.flush()
    assert fake_cluster.records("t", 0) == fake_cluster.records("t", 1) == []


async def test_the_records_of_a_failed_batch_are_named_each_with_its_error(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t", partitions=2)

    def on_partition_1(request: Any) -> bool:
        return any(p.index == 1 for t in request.topic_data for p in t.partition_data)

    fake_cluster.control(answer_partitions(87, when=on_partition_1), api_key="Produce", keep=True)
    async with Producer(fake_cluster.bootstrap, linger_ms=1) as producer:
        delivery = await producer.send_batch("t", VALUES[:10], partition=[0, 1] * 5)
        with pytest.raises(SendBatchError, match="5 of 10 records") as raised:
            await asyncio.wait_for(delivery, WAIT)
    errors = raised.value.errors
    assert [e is None for e in errors] == [True, False] * 5
    assert raised.value.sent.first_offsets == {0: 0}
    assert _values(fake_cluster, "t", 0) == VALUES[:10:2]


async def test_it_waits_for_room_in_buffer_memory_and_leaves_none_taken(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    # 500 records of 131 bytes in a buffer of 4,000: it waits for room again and again.
    async with Producer(
        fake_cluster.bootstrap, buffer_memory=4_000, batch_size=1_000, linger_ms=1
    ) as producer:
        other = asyncio.create_task(producer.send_batch("t", VALUES[:50], partition=0))
        sent = await asyncio.wait_for(await producer.send_batch("t", VALUES, partition=0), WAIT)
        await asyncio.wait_for(await other, WAIT)
        await producer.flush()
        assert producer._accumulator is not None
        assert producer._accumulator._memory.used == 0
    assert len(fake_cluster.records("t", 0)) == 550
    assert sent.offsets() == sorted(sent.offsets())


async def test_a_buffer_that_stays_full_fails_the_call_after_max_block_ms(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(lambda request, ctx: DROP, api_key="Produce", keep=True)
    async with Producer(
        fake_cluster.bootstrap, buffer_memory=4_000, max_block_ms=100, linger_ms=1
    ) as producer:
        began = time.monotonic()
        with pytest.raises(BufferFullError):
            await producer.send_batch("t", VALUES, partition=0)
        assert time.monotonic() - began < WAIT
        accumulator = producer._accumulator
        assert accumulator is not None
        # What it reserved and did not fill went back: only the queued records hold room.
        assert accumulator._memory.used == sum(b.memory for b in accumulator.unfinished)
        await producer.close(timeout=0)


async def test_cancelled_while_it_waits_the_records_queued_are_sent(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    release = asyncio.Event()

    async def hold(request: Any, ctx: HookContext) -> None:
        await release.wait()

    hook = fake_cluster.control(hold, api_key="Produce", keep=True)
    async with Producer(
        fake_cluster.bootstrap, buffer_memory=4_000, batch_size=1_000, linger_ms=1
    ) as producer:
        call = asyncio.create_task(producer.send_batch("t", VALUES, partition=0))
        while producer._accumulator is None or not producer._accumulator._waiters:
            await asyncio.sleep(0.001)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        hook.remove()
        release.set()
        await asyncio.wait_for(producer.flush(), WAIT)
        assert producer._accumulator._memory.used == 0
    written = _values(fake_cluster, "t", 0)
    assert 0 < len(written) < len(VALUES)
    assert written == VALUES[: len(written)]


async def test_idempotent_batches_are_retried_without_duplicates(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    cut = 0

    async def cut_after_writing(request: Any, ctx: HookContext) -> Any:
        nonlocal cut
        if cut >= 2:
            return None
        cut += 1
        await ctx.handle()  # the broker has the batch; its answer is lost
        return CUT

    fake_cluster.control(cut_after_writing, api_key="Produce", keep=True)
    async with Producer(fake_cluster.bootstrap, batch_size=1_000, linger_ms=1) as producer:
        sent = await asyncio.wait_for(await producer.send_batch("t", VALUES, partition=0), WAIT)
    assert cut == 2
    assert _values(fake_cluster, "t", 0) == VALUES
    assert sent.first_offsets == {0: 0}


@pytest.mark.asyncio(loop_scope="session")
async def test_idempotent_batches_of_several_calls_land_in_order_on_tansu(
    tansu_broker: Broker,
) -> None:
    topic = await fresh_topic(tansu_broker, partitions=2)
    async with Producer(tansu_broker.bootstrap, batch_size=1_000, linger_ms=1) as producer:
        calls = [
            await producer.send_batch(topic, pa.array(VALUES, pa.binary()), partition=0),
            await producer.send_batch(topic, VALUES, keys=KEYS),
            await producer.send_batch(topic, VALUES, partition=0),
        ]
        sent = [await asyncio.wait_for(d, WAIT) for d in calls]
    async with KafkaClient(tansu_broker.bootstrap) as client:
        read = [[r async for r in client.records(topic, p, 0, stop_at_end=True)] for p in range(2)]
    keyed = [VALUES[i] for i, p in enumerate(sent[1].partitions()) if p == 0]
    assert [r.value for r in read[0]] == VALUES + keyed + VALUES
    assert [r.offset for r in read[0]] == list(range(len(read[0])))
    assert sent[2].first_offsets == {0: len(VALUES) + len(keyed)}
    assert len(read[1]) == len(VALUES) - len(keyed)
