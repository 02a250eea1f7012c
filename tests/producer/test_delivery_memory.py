"""A delivery kept after its record is delivered holds what it answers with (offset,
timestamp, sizes), not its batch's records: the batch's bytes go once the batch is done."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

from kafkawire.producer import Producer
from tests.net.fakebroker import WAIT
from tests.producer.fake_broker import ProducerBroker

_RECORDS = 20_000


async def test_kept_deliveries_do_not_keep_their_records() -> None:
    async with ProducerBroker() as broker, Producer(broker.bootstrap, linger_ms=5) as producer:
        await producer.send_and_wait("t", b"warm", partition=0)
        broker.produce_error = lambda topic, partition, batch: 0
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            value = b"x" * 100
            deliveries = [await producer.send("t", value, partition=0) for _ in range(_RECORDS)]
            await asyncio.wait_for(producer.flush(), WAIT)
            broker.written.clear()
            for client_requests in (c.requests for c in broker._broker.clients):
                client_requests.clear()  # the fake broker's memory, not the producer's
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert all(d.done() for d in deliveries)
    # Each 100-byte record is ~121 bytes in its batch, and its batch's bytes were kept twice
    # (records and built payload): about 360 bytes a delivery. Without them, about 150.
    assert kept / _RECORDS < 220, f"{kept / _RECORDS:.0f} bytes kept per delivery"
