"""A delivery kept after its record is delivered holds what it answers with (offset,
timestamp, sizes), not its batch's records: the batch's bytes go once the batch is done."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

from kafkawire.producer import Producer
from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.fake.faults import answer_partitions
from tests.net.fakebroker import WAIT

_RECORDS = 20_000


async def test_kept_deliveries_do_not_keep_their_records(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    # The fake keeps nothing of what it is sent: only the producer's memory is measured.
    fake_cluster.control(answer_partitions(0, base_offset=0), api_key="Produce", keep=True)
    async with Producer(fake_cluster.bootstrap, linger_ms=5) as producer:
        await producer.send_and_wait("t", b"warm", partition=0)
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            value = b"x" * 100
            deliveries = [await producer.send("t", value, partition=0) for _ in range(_RECORDS)]
            await asyncio.wait_for(producer.flush(), WAIT)
            fake_cluster.requests.clear()  # the fake's log of requests, not the producer's
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert all(d.done() for d in deliveries)
    # Each 100-byte record is ~121 bytes in its batch, and its batch's bytes were kept twice
    # (records and built payload): about 360 bytes a delivery. Without them, about 150.
    assert kept / _RECORDS < 220, f"{kept / _RECORDS:.0f} bytes kept per delivery"
