"""Producer throughput: kafkawire against aiokafka, kafka-python and confluent-kafka, one run.

Each client sends RECORDS records of 100 bytes (no key) to a one-partition topic of its own on
the embedded Tansu broker, then flushes; rounds interleave the clients so that the machine's
state is shared fairly, and the best round counts. Settings: no compression, lz4, zstd and
idempotence on (kafkawire's default; the others' where they have it), each record sent on its
own (``send``); then *bulk*: kafkawire's ``send_batch`` (lists of CHUNK values, and pyarrow
arrays of them), aiokafka's batch API (``create_batch`` and ``send_batch``, one batch of
records at a time), confluent-kafka's ``produce`` (it has no other; it is C either way); and
*bulk, 1 MiB batches*: the same with ``batch_size`` (``batch.size``) at 1 MiB for every client,
librdkafka's default, so that the Produce requests, not the records, are few. Prints records/s,
MB/s, this process's CPU time per record (all its threads: confluent-kafka's librdkafka threads
too; the broker is another process) and kafkawire's ratio to each peer. Set
KAFKAWIRE_BENCH_RECORDS to change the count.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from kafkawire.client import KafkaClient
from kafkawire.producer import Producer
from kafkawire.testing import TansuBroker

RECORDS = int(os.environ.get("KAFKAWIRE_BENCH_RECORDS", "200000"))
ROUNDS = 3
VALUE = b"x" * 100
CHUNK = 10_000  # records per send_batch call
LARGE_BATCH = 1 << 20
_topics = (f"bench-producer-{i}" for i in itertools.count())

Run = Callable[[str, str, dict[str, Any]], Awaitable[None]]


def _batch_size(setting: dict[str, Any], default: int) -> int:
    return LARGE_BATCH if setting.get("large_batches") else default


async def _kafkawire(bootstrap: str, topic: str, setting: dict[str, Any]) -> None:
    options: dict[str, Any] = {"enable_idempotence": setting["idempotence"], "linger_ms": 5}
    if setting["compression"]:
        options["compression_type"] = setting["compression"]
    options["batch_size"] = _batch_size(setting, 16384)
    async with Producer(bootstrap, **options) as producer:
        if not setting.get("bulk"):
            for _ in range(RECORDS):
                await producer.send(topic, VALUE, partition=0)
        else:
            values = [VALUE] * CHUNK
            if setting.get("arrow"):
                import pyarrow as pa

                values = pa.array(values, pa.binary())
            for _ in range(RECORDS // CHUNK):
                await producer.send_batch(topic, values, partition=0)
        await producer.flush()


async def _aiokafka(bootstrap: str, topic: str, setting: dict[str, Any]) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        compression_type=setting["compression"],
        enable_idempotence=setting["idempotence"],
        linger_ms=5,
        acks="all",
        max_batch_size=_batch_size(setting, 16384),
    )
    await producer.start()
    try:
        if not setting.get("bulk"):
            for _ in range(RECORDS):
                await producer.send(topic, VALUE, partition=0)
        else:  # its batch API: fill a batch, send it, the next
            sent = []
            batch = producer.create_batch()
            for _ in range(RECORDS):
                if batch.append(key=None, value=VALUE, timestamp=None) is None:
                    sent.append(await producer.send_batch(batch, topic, partition=0))
                    batch = producer.create_batch()
                    batch.append(key=None, value=VALUE, timestamp=None)
            sent.append(await producer.send_batch(batch, topic, partition=0))
            await asyncio.gather(*sent)
        await producer.flush()
    finally:
        await producer.stop()


async def _kafka_python(bootstrap: str, topic: str, setting: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaProducer

    if setting.get("bulk"):
        raise NotImplementedError("kafka-python has no bulk API")  # its send is per record

    def run() -> None:
        producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            compression_type=setting["compression"],
            enable_idempotence=setting["idempotence"],
            linger_ms=5,
            acks="all",
        )
        for _ in range(RECORDS):
            producer.send(topic, VALUE, partition=0)
        producer.flush()
        producer.close()

    await asyncio.to_thread(run)


async def _confluent(bootstrap: str, topic: str, setting: dict[str, Any]) -> None:
    import confluent_kafka

    def run() -> None:
        producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": bootstrap,
                "compression.type": setting["compression"] or "none",
                "enable.idempotence": setting["idempotence"],
                "linger.ms": 5,
                "acks": "all",
                "batch.size": _batch_size(setting, 1_000_000),
            }
        )
        for _ in range(RECORDS):
            while True:
                try:
                    producer.produce(topic, VALUE, partition=0)
                    break
                except BufferError:  # its queue is full: serve callbacks, then go on
                    producer.poll(0.01)
        producer.flush()

    await asyncio.to_thread(run)


CLIENTS: dict[str, Run] = {
    "kafkawire": _kafkawire,
    "aiokafka": _aiokafka,
    "kafka-python": _kafka_python,
    "confluent-kafka": _confluent,
}
SETTINGS = {
    "plain": {"compression": None, "idempotence": False},
    "lz4": {"compression": "lz4", "idempotence": False},
    "zstd": {"compression": "zstd", "idempotence": False},
    "idempotent": {"compression": None, "idempotence": True},
    # Without idempotence, which aiokafka cannot have on Tansu (InitProducerId v0-2 fail).
    "bulk": {"compression": None, "idempotence": False, "bulk": True},
    "bulk, Arrow": {"compression": None, "idempotence": False, "bulk": True, "arrow": True},
    "bulk, 1 MiB batches": {
        "compression": None,
        "idempotence": False,
        "bulk": True,
        "large_batches": True,
    },
}


async def _measure(bootstrap: str) -> None:
    async with KafkaClient(bootstrap) as client:
        for name, setting in SETTINGS.items():
            best: dict[str, float] = {}
            cpu: dict[str, float] = {}  # this process's CPU (every thread) per record, best
            for _ in range(ROUNDS):
                for client_name, run in CLIENTS.items():
                    topic = next(_topics)
                    await client.create_topic(topic, partitions=1)
                    start, start_cpu = time.perf_counter(), time.process_time()
                    try:
                        await run(bootstrap, topic, setting)
                    except NotImplementedError:
                        continue  # a peer without this setting
                    except Exception as exc:  # a peer that cannot: say so, go on
                        print(f"  {client_name} ({name}) failed: {exc!r}")
                        continue
                    rate = RECORDS / (time.perf_counter() - start)
                    used = (time.process_time() - start_cpu) / RECORDS * 1e6
                    best[client_name] = max(best.get(client_name, 0.0), rate)
                    cpu[client_name] = min(cpu.get(client_name, float("inf")), used)
            ours = best.get("kafkawire", 0.0)
            print(f"{name}: {RECORDS} records of {len(VALUE)} bytes, best of {ROUNDS}")
            for client_name, rate in best.items():
                ratio = f"kafkawire x{ours / rate:.2f}" if client_name != "kafkawire" else ""
                megabytes = rate * len(VALUE) / 1e6
                print(
                    f"  {client_name:16} {rate:10,.0f} records/s {megabytes:7.1f} MB/s "
                    f"{cpu[client_name]:5.2f} us CPU/record  {ratio}"
                )


def main() -> None:
    async def run() -> None:
        async with TansuBroker() as broker:
            await _measure(broker.bootstrap)

    asyncio.run(run())


if __name__ == "__main__":
    main()
