"""Producer throughput: kafkawire against aiokafka, kafka-python and confluent-kafka, one run.

Each client sends RECORDS records of 100 bytes (no key) to a one-partition topic of its own on
the embedded Tansu broker, then flushes; rounds interleave the clients so that the machine's
state is shared fairly, and the best round counts. Settings: no compression, lz4, zstd and
idempotence on (kafkawire's default; the others' where they have it), each record sent on its
own (``send``); then *bulk*: kafkawire's ``send_batch`` (lists of CHUNK values, and pyarrow
arrays of them), aiokafka's batch API (``create_batch`` and ``send_batch``, one batch of
records at a time), confluent-kafka's ``produce`` (it has no other; it is C either way).

Each setting runs with three ways of batching, since the clients' defaults differ and batch
size decides how many Produce requests carry the records:

- *each client's defaults*: nothing set, so each client batches as its library does by
  default: kafkawire 256 KiB (Java's 16 KiB is its one default not taken, see docs/design.md)
  with Java's ``linger.ms`` 5 (Kafka 4.0's), aiokafka and kafka-python 16 KiB with no linger,
  librdkafka about 1 MB (``batch.size`` 1,000,000, at most ``batch.num.messages`` 10,000)
  with 5 ms;
- *same: 16 KiB, 5 ms* and *same: 1 MiB, 5 ms*: every client at that batch size and linger.

Prints records/s, MB/s, this process's CPU time per record (all its threads: confluent-kafka's
librdkafka threads too; the broker is another process) and kafkawire's ratio to each peer,
then a table of kafkawire's ratio to confluent-kafka's records/s for each setting and way of
batching. Environment: KAFKAWIRE_BENCH_RECORDS (the count), KAFKAWIRE_BENCH_SETTINGS,
KAFKAWIRE_BENCH_BATCHING and KAFKAWIRE_BENCH_CLIENTS (comma-separated names to run only those,
e.g. ``plain,idempotent``, ``defaults,1 MiB`` and ``kafkawire,confluent``: a name matches the
settings, ways or clients that contain it).

``python -m benchmarks.bench_producer once [SETTING [BATCHING [RECORDS [LINGER_MS]]]]`` runs
kafkawire alone, once, after a warm-up (what ``valgrind --tool=callgrind`` measures: run it at
two counts and divide the difference of the instructions by the difference of the counts;
under valgrind, give a linger of a second, so that batches fill as they do at full speed).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import sys
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
LINGER_MS = 5
_topics = (f"bench-producer-{i}" for i in itertools.count())

Batching = tuple[int, int] | None
"""(batch size in bytes, linger in ms) set on every client, or None: each client's defaults."""
Run = Callable[[str, str, dict[str, Any], Batching, int], Awaitable[None]]

# What each client batches by when nothing is set (for the header lines).
DEFAULTS = {
    "kafkawire": "256 KiB, 5 ms",
    "aiokafka": "16 KiB, 0 ms",
    "kafka-python": "16 KiB, 0 ms",
    "confluent-kafka": "1 MB (at most 10,000 records), 5 ms",
}


async def _kafkawire(
    bootstrap: str, topic: str, setting: dict[str, Any], batching: Batching, records: int
) -> None:
    options: dict[str, Any] = {"enable_idempotence": setting["idempotence"]}
    if setting["compression"]:
        options["compression_type"] = setting["compression"]
    if batching is not None:
        options["batch_size"], options["linger_ms"] = batching
    async with Producer(bootstrap, **options) as producer:
        if not setting.get("bulk"):
            for _ in range(records):
                await producer.send(topic, VALUE, partition=0)
        else:
            values = [VALUE] * CHUNK
            if setting.get("arrow"):
                import pyarrow as pa

                values = pa.array(values, pa.binary())
            for _ in range(records // CHUNK):
                await producer.send_batch(topic, values, partition=0)
        await producer.flush()


async def _aiokafka(
    bootstrap: str, topic: str, setting: dict[str, Any], batching: Batching, records: int
) -> None:
    from aiokafka import AIOKafkaProducer

    if setting["idempotence"]:
        raise NotImplementedError("aiokafka's InitProducerId (v0-2) fails on Tansu")
    options: dict[str, Any] = {}
    if batching is not None:
        options["max_batch_size"], options["linger_ms"] = batching
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        compression_type=setting["compression"],
        enable_idempotence=setting["idempotence"],
        acks="all",
        **options,
    )
    await producer.start()
    try:
        if not setting.get("bulk"):
            for _ in range(records):
                await producer.send(topic, VALUE, partition=0)
        else:  # its batch API: fill a batch, send it, the next
            sent = []
            batch = producer.create_batch()
            for _ in range(records):
                if batch.append(key=None, value=VALUE, timestamp=None) is None:
                    sent.append(await producer.send_batch(batch, topic, partition=0))
                    batch = producer.create_batch()
                    batch.append(key=None, value=VALUE, timestamp=None)
            sent.append(await producer.send_batch(batch, topic, partition=0))
            await asyncio.gather(*sent)
        await producer.flush()
    finally:
        await producer.stop()


async def _kafka_python(
    bootstrap: str, topic: str, setting: dict[str, Any], batching: Batching, records: int
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka import KafkaProducer

    if setting.get("bulk"):
        raise NotImplementedError("kafka-python has no bulk API")  # its send is per record
    options: dict[str, Any] = {}
    if batching is not None:
        options["batch_size"], options["linger_ms"] = batching

    def run() -> None:
        producer = KafkaProducer(
            bootstrap_servers=bootstrap,
            compression_type=setting["compression"],
            enable_idempotence=setting["idempotence"],
            acks="all",
            **options,
        )
        for _ in range(records):
            producer.send(topic, VALUE, partition=0)
        producer.flush()
        producer.close()

    await asyncio.to_thread(run)


async def _confluent(
    bootstrap: str, topic: str, setting: dict[str, Any], batching: Batching, records: int
) -> None:
    import confluent_kafka

    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "compression.type": setting["compression"] or "none",
        "enable.idempotence": setting["idempotence"],
        "acks": "all",
    }
    if batching is not None:
        config["batch.size"], config["linger.ms"] = batching

    def run() -> None:
        producer = confluent_kafka.Producer(config)
        for _ in range(records):
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
    # Without idempotence, which aiokafka cannot have on Tansu.
    "bulk": {"compression": None, "idempotence": False, "bulk": True},
    "bulk, Arrow": {"compression": None, "idempotence": False, "bulk": True, "arrow": True},
}
BATCHING: dict[str, Batching] = {
    "each client's defaults": None,
    "same: 16 KiB, 5 ms": (16384, LINGER_MS),
    "same: 1 MiB, 5 ms": (1 << 20, LINGER_MS),
}


def _chosen(names: dict[str, Any], variable: str) -> list[str]:
    """The names ``variable`` (comma-separated parts of names) picks; all without it."""
    wanted = [w.strip() for w in os.environ.get(variable, "").split(",") if w.strip()]
    return [n for n in names if not wanted or any(w in n for w in wanted)]


async def _measure(bootstrap: str) -> None:
    ratios: dict[tuple[str, str], float] = {}
    async with KafkaClient(bootstrap) as client:
        for name in _chosen(SETTINGS, "KAFKAWIRE_BENCH_SETTINGS"):
            setting = SETTINGS[name]
            for way in _chosen(BATCHING, "KAFKAWIRE_BENCH_BATCHING"):
                batching = BATCHING[way]
                best: dict[str, float] = {}
                cpu: dict[str, float] = {}  # this process's CPU (every thread) per record, best
                for _ in range(ROUNDS):
                    for client_name in _chosen(CLIENTS, "KAFKAWIRE_BENCH_CLIENTS"):
                        run = CLIENTS[client_name]
                        topic = next(_topics)
                        await client.create_topic(topic, partitions=1)
                        start, start_cpu = time.perf_counter(), time.process_time()
                        try:
                            await run(bootstrap, topic, setting, batching, RECORDS)
                        except NotImplementedError:
                            continue  # a peer without this setting
                        except Exception as exc:  # a peer that cannot: say so, go on
                            print(f"  {client_name} ({name}) failed: {exc!r}")
                            continue
                        rate = RECORDS / (time.perf_counter() - start)
                        used = (time.process_time() - start_cpu) / RECORDS * 1e6
                        best[client_name] = max(best.get(client_name, 0.0), rate)
                        cpu[client_name] = min(cpu.get(client_name, float("inf")), used)
                _report(name, way, batching, best, cpu)
                if best.get("kafkawire") and best.get("confluent-kafka"):
                    ratios[name, way] = best["kafkawire"] / best["confluent-kafka"]
    _summary(ratios)


def _report(
    name: str, way: str, batching: Batching, best: dict[str, float], cpu: dict[str, float]
) -> None:
    ours = best.get("kafkawire", 0.0)
    print(f"{name}, {way}: {RECORDS} records of {len(VALUE)} bytes, best of {ROUNDS}")
    for client_name, rate in best.items():
        ratio = f"kafkawire x{ours / rate:.2f}" if client_name != "kafkawire" else ""
        megabytes = rate * len(VALUE) / 1e6
        batches = DEFAULTS[client_name] if batching is None else ""
        print(
            f"  {client_name:16} {rate:10,.0f} records/s {megabytes:7.1f} MB/s "
            f"{cpu[client_name]:5.2f} us CPU/record  {ratio:18} {batches}"
        )


def _summary(ratios: dict[tuple[str, str], float]) -> None:
    """kafkawire's records/s over confluent-kafka's, per setting and way of batching."""
    if not ratios:
        return
    ways = [w for w in BATCHING if any(w == way for _, way in ratios)]
    print("\nkafkawire / confluent-kafka, records/s")
    print(f"  {'':14}" + "".join(f"{w:>26}" for w in ways))
    for name in SETTINGS:
        if any(n == name for n, _ in ratios):
            cells = [f"x{ratios[name, w]:.2f}" if (name, w) in ratios else "-" for w in ways]
            print(f"  {name:14}" + "".join(f"{c:>26}" for c in cells))


async def _once(setting_name: str, way: str, records: int, linger_ms: int | None) -> None:
    """kafkawire alone: a warm-up run, then one measured run (for callgrind and perf)."""
    setting = SETTINGS[_chosen_one(SETTINGS, setting_name)]
    batching = BATCHING[_chosen_one(BATCHING, way)]
    if linger_ms is not None:
        batching = (16384 if batching is None else batching[0], linger_ms)
    async with TansuBroker() as broker, KafkaClient(broker.bootstrap) as client:
        for count in (min(records, 1_000), records):
            topic = next(_topics)
            await client.create_topic(topic, partitions=1)
            start, start_cpu = time.perf_counter(), time.process_time()
            await _kafkawire(broker.bootstrap, topic, setting, batching, count)
        rate = records / (time.perf_counter() - start)
        used = (time.process_time() - start_cpu) / records * 1e6
        print(f"{records} records: {rate:,.0f} records/s, {used:.2f} us CPU/record")


def _chosen_one(names: dict[str, Any], wanted: str) -> str:
    found = [n for n in names if wanted in n]
    if not found:
        raise SystemExit(f"no {wanted!r} among {', '.join(names)}")
    return found[0]


def main() -> None:
    # The peers' own logs (aiokafka and kafka-python reconnecting as the broker stops) are not
    # the benchmark's output.
    for name in ("aiokafka", "kafka"):
        logging.getLogger(name).setLevel(logging.CRITICAL)

    async def run() -> None:
        async with TansuBroker() as broker:
            await _measure(broker.bootstrap)

    asyncio.run(run())


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
    elif sys.argv[1:2] == ["once"]:
        setting_name, way = [*sys.argv[2:4], "plain", "defaults"][:2]
        count = int(sys.argv[4]) if len(sys.argv) > 4 else RECORDS
        linger = int(sys.argv[5]) if len(sys.argv) > 5 else None
        asyncio.run(_once(setting_name, way, count, linger))
    else:
        main()
