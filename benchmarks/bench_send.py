"""``Producer.send`` alone: the per-record path, without requests.

A producer started on the in-memory fake cluster (a topic of 4 partitions) sends RECORDS
records of 100 bytes into 1 MiB batches that never go out (the accumulator is told nothing is
ready, so no Produce request is built and the fake cluster decodes nothing): what is left is
``send`` and the caller's loop, and once per batch the full path (batches are dropped
between runs). Three ways:

- *given*: ``partition=0``, as ``bench_producer`` sends;
- *sticky*: no key, no partition (the sticky partitioner, KIP-794);
- *keyed*: 1,000 keys by turns (murmur2).

Prints CPU ns per record (``time.process_time``, best of three runs). ``python -m
benchmarks.bench_send once WAY RECORDS`` runs one way once after a short warm-up, for
``valgrind --tool=callgrind``: the instructions at two counts, their difference over the
difference of the counts, is a record's cost. Nothing here asserts a timing.
"""

from __future__ import annotations

import asyncio
import sys
import time

from kafkawire.errors import ClientClosedError
from kafkawire.producer import Producer
from kafkawire.producer.accumulator import RecordAccumulator
from kafkawire.testing.fake import FakeCluster

RECORDS = 200_000
VALUE = b"x" * 100
KEYS = [b"key-%d" % i for i in range(1_000)]
WAYS = ("given", "sticky", "keyed")


async def _sends(producer: Producer, way: str, records: int) -> None:
    send = producer.send
    if way == "given":
        for _ in range(records):
            await send("t", VALUE, partition=0)
    elif way == "sticky":
        for _ in range(records):
            await send("t", VALUE)
    else:
        for i in range(records):
            await send("t", VALUE, KEYS[i % 1_000])


async def _run(ways: tuple[str, ...], records: int, rounds: int) -> None:
    async with FakeCluster() as cluster:
        cluster.create_topic("t", partitions=4)
        async with Producer(
            cluster.bootstrap, batch_size=1 << 20, linger_ms=60_000, buffer_memory=1 << 30
        ) as producer:
            await producer.send_and_wait("t", VALUE, partition=0)  # metadata, connections
            accumulator = producer._accumulator
            assert accumulator is not None
            accumulator.ready = lambda now, busy: ([], float("inf"))  # type: ignore[method-assign]
            for way in ways:
                await _sends(producer, way, min(records, 1_000))  # warm-up
                best = float("inf")
                for _ in range(rounds):
                    _drop(accumulator)
                    start = time.process_time()
                    await _sends(producer, way, records)
                    best = min(best, time.process_time() - start)
                print(f"  {way:7} {best / records * 1e9:7.0f} ns CPU per record")
            _drop(accumulator)


def _drop(accumulator: RecordAccumulator) -> None:
    """Every batch out, failed, its memory given back: each round starts from none."""
    dropped = ClientClosedError("bench_send: dropped, never sent")
    for batch in accumulator.remove_all():
        accumulator.release(batch)
        batch.fail(dropped)


def main() -> None:
    print(f"send(), {RECORDS} records of {len(VALUE)} bytes into 1 MiB batches, best of 3")
    asyncio.run(_run(WAYS, RECORDS, 3))


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
    elif sys.argv[1:2] == ["once"]:
        asyncio.run(_run((sys.argv[2],), int(sys.argv[3]), 1))
    else:
        main()
