"""Share group consumption (KIP-932): kafkawire's ShareConsumer against confluent-kafka's, one run.

librdkafka's mock cluster (the only broker here that serves share groups) holds RECORDS
records of 100 bytes in PARTITIONS partitions, its share groups starting at the earliest
offset. Each client joins a new share group alone, reads every record in implicit mode (each
poll accepts the one before; a last commit accepts the rest) and closes; rounds interleave the
clients and the best round counts. Prints records/s, how many records the broker confirmed
acknowledged (through each client's acknowledgement commit callback) and kafkawire's ratio.
Set KAFKAWIRE_BENCH_RECORDS to change the count.

confluent-kafka's ShareConsumer (2.16: a preview) is synchronous: it runs in a thread, as an
asyncio application would have to run it. A confluent-kafka without ShareConsumer is said so
and left out.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from collections.abc import Awaitable, Callable

from kafkawire.consumer import ShareConsumer
from kafkawire.producer import Producer
from kafkawire.testing import MockCluster

RECORDS = int(os.environ.get("KAFKAWIRE_BENCH_RECORDS", "100000"))
PARTITIONS = 4
ROUNDS = 3
VALUE = b"x" * 100
TOPIC = "bench-share"

Run = Callable[[str, str], Awaitable[tuple[int, int]]]  # (bootstrap, group) -> (read, acked)
_groups = itertools.count()


async def _kafkawire(bootstrap: str, group: str) -> tuple[int, int]:
    acked = 0

    def heard(offsets: dict[object, set[int]], error: object) -> None:
        nonlocal acked
        if error is None:
            acked += sum(len(o) for o in offsets.values())

    count = 0
    async with ShareConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=group) as consumer:
        consumer.set_acknowledgement_commit_callback(heard)
        while count < RECORDS:
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                count += len(records)
        await consumer.commit()  # the last batch, and the outcome of every acknowledgement
    return count, acked


async def _confluent(bootstrap: str, group: str) -> tuple[int, int]:
    import confluent_kafka

    def run() -> tuple[int, int]:
        acked = 0

        def heard(offsets: dict[object, set[int]], error: object) -> None:
            nonlocal acked
            if error is None:
                acked += sum(len(o) for o in offsets.values())

        consumer = confluent_kafka.ShareConsumer(
            {"bootstrap.servers": bootstrap, "group.id": group}
        )
        consumer.set_acknowledgement_commit_callback(heard)
        consumer.subscribe([TOPIC])
        count = 0
        while count < RECORDS:
            count += sum(1 for m in consumer.poll(1.0) if m.error() is None)
        consumer.commit_sync()
        consumer.close()
        return count, acked

    return await asyncio.to_thread(run)


def _clients() -> dict[str, Run]:
    clients: dict[str, Run] = {"kafkawire": _kafkawire}
    try:
        import confluent_kafka
    except ImportError:
        print("  confluent-kafka is not installed: kafkawire alone")
        return clients
    if not hasattr(confluent_kafka, "ShareConsumer"):
        print(
            f"  confluent-kafka {confluent_kafka.version()[0]} has no ShareConsumer "
            "(2.16 and later): kafkawire alone"
        )
        return clients
    clients["confluent-kafka"] = _confluent
    return clients


async def _fill(bootstrap: str) -> None:
    async with Producer(bootstrap, linger_ms=5) as producer:
        for i in range(RECORDS):
            await producer.send(TOPIC, VALUE, partition=i % PARTITIONS)
        await producer.flush()


async def _measure(bootstrap: str) -> None:
    clients = _clients()
    best: dict[str, float] = {}
    acked: dict[str, int] = {}
    for _ in range(ROUNDS):
        for name, run in clients.items():
            start = time.perf_counter()
            try:
                count, confirmed = await run(bootstrap, f"bench-{next(_groups)}")
            except Exception as exc:  # a peer that cannot: say so, go on
                print(f"  {name} failed: {exc!r}")
                continue
            rate = count / (time.perf_counter() - start)
            if rate > best.get(name, 0.0):
                best[name], acked[name] = rate, confirmed
    ours = best.get("kafkawire", 0.0)
    print(
        f"share consume: {RECORDS} records of {len(VALUE)} bytes, {PARTITIONS} partitions, "
        f"one member, implicit acknowledgement, librdkafka's mock cluster, best of {ROUNDS}"
    )
    for name, rate in best.items():
        ratio = f"kafkawire x{ours / rate:.2f}" if name != "kafkawire" else ""
        print(f"  {name:16} {rate:10,.0f} records/s {acked[name]:9,} acknowledged  {ratio}")


def main() -> None:
    # The mock adds a byte to some responses: kafkawire says so once per kind (not news here).
    logging.getLogger("kafkawire.protocol.framing").setLevel(logging.ERROR)

    async def run() -> None:
        async with MockCluster(share_auto_offset_reset="earliest") as cluster:
            await _fill(cluster.bootstrap)
            await _measure(cluster.bootstrap)

    asyncio.run(run())


if __name__ == "__main__":
    main()
