"""Consumer throughput: kafkawire against aiokafka, kafka-python and confluent-kafka, one run.

One topic of one partition on the embedded Tansu broker holds RECORDS records of 100 bytes
(written once, in batches of 1,000); each client reads all of them from offset 0, in batches
(``getmany``, ``poll``, ``consume``), then one record at a time (``async for``, for the two
asyncio clients); rounds interleave the clients so that the machine's state is shared fairly,
and the best round counts. Prints records/s, MB/s, this process's CPU time per record, and
kafkawire's ratio to each peer; with
KAFKAWIRE_BENCH_PROFILE=1 it also profiles one kafkawire run and prints where the time goes.
Set KAFKAWIRE_BENCH_RECORDS to change the count.
"""

from __future__ import annotations

import asyncio
import cProfile
import functools
import os
import pstats
import time
import warnings
from collections.abc import Awaitable, Callable

from kafkawire.client import KafkaClient
from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.testing import TansuBroker

RECORDS = int(os.environ.get("KAFKAWIRE_BENCH_RECORDS", "200000"))
ROUNDS = 3
VALUE = b"x" * 100
TOPIC = "bench-consumer"
_BATCH = 1000

Run = Callable[[str], Awaitable[int]]


async def _kafkawire(bootstrap: str, *, iterate: bool = False) -> int:
    count = 0
    async with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(TOPIC, 0)])
        if iterate:
            async for _ in consumer:
                count += 1
                if count == RECORDS:
                    break
        while count < RECORDS:
            for records in (await consumer.getmany(timeout_ms=1000, max_records=10_000)).values():
                count += len(records)
    return count


async def _aiokafka(bootstrap: str, *, iterate: bool = False) -> int:
    from aiokafka import AIOKafkaConsumer
    from aiokafka import TopicPartition as AioTopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    try:
        consumer.assign([AioTopicPartition(TOPIC, 0)])
        count = 0
        if iterate:
            async for _ in consumer:
                count += 1
                if count == RECORDS:
                    break
        while count < RECORDS:
            for records in (await consumer.getmany(timeout_ms=1000, max_records=10_000)).values():
                count += len(records)
        return count
    finally:
        await consumer.stop()


async def _kafka_python(bootstrap: str) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaConsumer
        from kafka import TopicPartition as KpTopicPartition

    def run() -> int:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
        consumer.assign([KpTopicPartition(TOPIC, 0)])
        count = 0
        while count < RECORDS:
            for records in consumer.poll(timeout_ms=1000, max_records=10_000).values():
                count += len(records)
        consumer.close()
        return count

    return await asyncio.to_thread(run)


async def _confluent(bootstrap: str) -> int:
    import confluent_kafka

    def run() -> int:
        consumer = confluent_kafka.Consumer(
            {"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False}
        )
        consumer.assign([confluent_kafka.TopicPartition(TOPIC, 0, 0)])
        count = 0
        while count < RECORDS:
            count += len(consumer.consume(num_messages=10_000, timeout=1.0))
        consumer.close()
        return count

    return await asyncio.to_thread(run)


CLIENTS: dict[str, Run] = {
    "kafkawire": _kafkawire,
    "aiokafka": _aiokafka,
    "kafka-python": _kafka_python,
    "confluent-kafka": _confluent,
}
ITERATING: dict[str, Run] = {
    "kafkawire": functools.partial(_kafkawire, iterate=True),
    "aiokafka": functools.partial(_aiokafka, iterate=True),
}


async def _fill(bootstrap: str) -> None:
    async with KafkaClient(bootstrap) as client:
        await client.create_topic(TOPIC, partitions=1)
        for _ in range(0, RECORDS, _BATCH):
            await client.produce(TOPIC, 0, [VALUE] * _BATCH)


async def _measure(bootstrap: str, clients: dict[str, Run], how: str) -> None:
    best: dict[str, float] = {}
    cpu: dict[str, float] = {}  # this process's CPU (every thread) per record, best
    for _ in range(ROUNDS):
        for name, run in clients.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            try:
                count = await run(bootstrap)
            except Exception as exc:  # a peer that cannot: say so, go on
                print(f"  {name} failed: {exc!r}")
                continue
            best[name] = max(best.get(name, 0.0), count / (time.perf_counter() - start))
            used = (time.process_time() - start_cpu) / count * 1e6
            cpu[name] = min(cpu.get(name, float("inf")), used)
    ours = best.get("kafkawire", 0.0)
    print(f"{how}: {RECORDS} records of {len(VALUE)} bytes, one partition, best of {ROUNDS}")
    for name, rate in best.items():
        ratio = f"kafkawire x{ours / rate:.2f}" if name != "kafkawire" else ""
        print(
            f"  {name:16} {rate:10,.0f} records/s {rate * len(VALUE) / 1e6:7.1f} MB/s "
            f"{cpu[name]:5.2f} us CPU/record  {ratio}"
        )


async def _profile(bootstrap: str) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    await _kafkawire(bootstrap)
    profiler.disable()
    print("where kafkawire's time goes (one run, cProfile, by own time):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(12)


def main() -> None:
    async def run() -> None:
        async with TansuBroker() as broker:
            await _fill(broker.bootstrap)
            await _measure(broker.bootstrap, CLIENTS, "consume in batches")
            await _measure(broker.bootstrap, ITERATING, "consume record by record (async for)")
            if os.environ.get("KAFKAWIRE_BENCH_PROFILE"):
                await _profile(broker.bootstrap)

    asyncio.run(run())


if __name__ == "__main__":
    main()
