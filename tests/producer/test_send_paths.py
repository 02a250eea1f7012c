"""``send``'s two paths: the short one (bytes, no headers or timestamp, a known topic, room in
the partition's open batch) and the full one, which must come to the same records, in the
same order, under the same bounds."""

from __future__ import annotations

import asyncio
import time

import pytest

from kafkawire.cluster import InvalidPartitionError
from kafkawire.producer import Producer, batch
from kafkawire.records import RecordBatchBuilder
from kafkawire.testing.fake import FakeCluster
from tests.net.fakebroker import WAIT

needs_accel = pytest.mark.skipif(
    batch.append_record is batch.append_record_pure,
    reason="the C extension is not built, or disabled",
)


@needs_accel
@pytest.mark.parametrize(("key", "value"), [(None, b"v"), (b"k", None), (b"", b"x" * 300)])
async def test_the_compiled_append_gives_what_the_pure_one_gives(
    key: bytes | None, value: bytes | None
) -> None:
    future = asyncio.get_running_loop().create_future()
    builders = RecordBatchBuilder(), RecordBatchBuilder()
    before = time.time_ns() // 1_000_000
    compiled = [batch.append_record(builders[0], future, key, value) for _ in range(3)]
    pure = [batch.append_record_pure(builders[1], future, key, value) for _ in range(3)]
    after = time.time_ns() // 1_000_000
    for made in (compiled, pure):
        assert [d._offset for d in made] == [0, 1, 2]
        assert all(d._future is future for d in made)
        assert all(before <= d._timestamp <= after for d in made)
        assert {(d._key_size, d._value_size) for d in made} == {
            (-1 if key is None else len(key), -1 if value is None else len(value))
        }
    # The same records once stamped alike: the builder took each delivery's timestamp.
    again = RecordBatchBuilder()
    for delivery in compiled:
        again.append(key, value, timestamp=delivery._timestamp)
    assert again.encoded() == builders[0].encoded()


async def test_records_of_both_paths_keep_their_order_and_batches(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, batch_size=1_000, linger_ms=1) as producer:
        deliveries = []
        for i in range(200):
            headers = [("h", b"%d" % i)] if i % 7 == 0 else None  # the full path
            deliveries.append(await producer.send("t", b"%03d" % i, partition=0, headers=headers))
        placed = await asyncio.wait_for(asyncio.gather(*deliveries), WAIT)
    assert [m.offset for m in placed] == list(range(200))
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"%03d" % i for i in range(200)]


async def test_a_topic_that_grew_is_taken_once_the_metadata_says_so(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, metadata_max_age_ms=20, linger_ms=1) as producer:
        await asyncio.wait_for(producer.send_and_wait("t", b"v", partition=0), WAIT)
        fake_cluster.state.add_partitions(fake_cluster.state.by_name["t"], 3)
        with pytest.raises(InvalidPartitionError):
            await producer.send("t", b"v", partition=2)  # as Java's: the count it has
        deadline = time.monotonic() + WAIT
        while True:  # the sender refreshes metadata older than metadata_max_age_ms
            await asyncio.wait_for(producer.send_and_wait("t", b"v", partition=0), WAIT)
            try:
                delivery = await producer.send("t", b"v", partition=2)
                break
            except InvalidPartitionError:
                assert time.monotonic() < deadline, "the new partition count was never taken"
        assert (await asyncio.wait_for(delivery, WAIT)).partition == 2
