"""What the always-on metrics cost: kafkawire's produce and consume runs of ``bench_producer``
and ``bench_consumer``, with metrics recorded as shipped and with every ``Sensor.record`` made
a no-op, in one run.

Rounds interleave the two so that the machine's state is shared fairly; the best round counts.
The metrics push (KIP-714) is off in both (the embedded Tansu asks for no metrics anyway), so
the difference is the recording on the produce and consume paths: per batch, per request, per
poll, never per record. Prints records/s and this process's CPU time per record for each, and
the ratio; and, since on a busy machine that difference is within the noise, a count that is
not: how many ``Sensor.record`` calls one more run makes per 1,000 records, times what one
call costs (``timeit``), as the CPU the recording adds per record. Set
KAFKAWIRE_BENCH_RECORDS to change the count.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import timeit
from collections.abc import Awaitable, Callable, Iterator

from kafkawire.client import KafkaClient
from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.metrics import Avg, Max, MetricName, Metrics, Rate, Sensor
from kafkawire.producer import Producer
from kafkawire.testing import TansuBroker

from . import bench_consumer
from .bench_producer import RECORDS, VALUE

ROUNDS = 5
PRODUCE_TOPIC = "bench-metrics-produce"


@contextlib.contextmanager
def _counting() -> Iterator[list[int]]:
    """Count the ``Sensor.record`` calls made inside (the one-element list holds the count)."""
    calls = [0]
    record = Sensor.record

    def counted(self: Sensor, value: float = 1.0) -> None:
        calls[0] += 1
        record(self, value)

    Sensor.record = counted  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        Sensor.record = record  # type: ignore[method-assign]


def _record_cost_ns() -> float:
    """What one ``record`` costs, on a sensor with an average, a maximum and a rate."""
    sensor = Metrics().sensor("latency")
    for name, stat in (("avg", Avg()), ("max", Max()), ("rate", Rate())):
        sensor.add(MetricName(name, "bench"), stat)
    return min(timeit.repeat(lambda: sensor.record(2.5), number=100_000, repeat=5)) / 100_000 * 1e9


@contextlib.contextmanager
def _recording(on: bool) -> Iterator[None]:
    """Metrics as shipped (``on``), or every sensor's ``record`` a no-op."""
    if on:
        yield
        return
    record = Sensor.record
    Sensor.record = lambda self, value=1.0: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        Sensor.record = record  # type: ignore[method-assign]


async def _produce(bootstrap: str) -> None:
    async with Producer(bootstrap, linger_ms=5, enable_metrics_push=False) as producer:
        for _ in range(RECORDS):
            await producer.send(PRODUCE_TOPIC, VALUE, partition=0)
        await producer.flush()


async def _consume(bootstrap: str) -> None:
    count = 0
    async with Consumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_metrics_push=False
    ) as consumer:
        consumer.assign([TopicPartition(bench_consumer.TOPIC, 0)])
        while count < RECORDS:
            for records in (await consumer.getmany(timeout_ms=1000, max_records=10_000)).values():
                count += len(records)


async def _measure_on_tansu() -> None:
    async with TansuBroker() as broker:
        await _measure(broker.bootstrap)


async def _measure(bootstrap: str) -> None:
    async with KafkaClient(bootstrap) as client:
        await client.create_topic(PRODUCE_TOPIC, partitions=1)
    await bench_consumer._fill(bootstrap)
    paths: dict[str, Callable[[str], Awaitable[None]]] = {
        "produce": _produce,
        "consume": _consume,
    }
    cost_ns = _record_cost_ns()
    for path, run in paths.items():
        rate: dict[bool, float] = {}
        cpu: dict[bool, float] = {}
        for _ in range(ROUNDS):
            for on in (True, False):
                with _recording(on):
                    start, start_cpu = time.perf_counter(), time.process_time()
                    await run(bootstrap)
                    used = (time.process_time() - start_cpu) / RECORDS * 1e6
                    rate[on] = max(rate.get(on, 0.0), RECORDS / (time.perf_counter() - start))
                    cpu[on] = min(cpu.get(on, float("inf")), used)
        print(f"{path}: {RECORDS} records of {len(VALUE)} bytes, best of {ROUNDS}")
        for on, label in ((True, "metrics on"), (False, "metrics off")):
            print(f"  {label:12} {rate[on]:10,.0f} records/s {cpu[on]:5.2f} us CPU/record")
        ratios = f"x{rate[True] / rate[False]:.3f} records/s, x{cpu[True] / cpu[False]:.3f} CPU"
        print(f"  on/off: {ratios}")
        with _counting() as calls:
            await run(bootstrap)
        per_thousand = calls[0] / RECORDS * 1000
        added_us = calls[0] / RECORDS * cost_ns / 1000
        print(
            f"  {per_thousand:.1f} sensor records per 1,000 records, {cost_ns:.0f} ns each: "
            f"{added_us:.4f} us CPU/record ({added_us / cpu[True]:.2%} of it)"
        )


def main() -> None:
    asyncio.run(_measure_on_tansu())


if __name__ == "__main__":
    main()
