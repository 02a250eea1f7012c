"""What OpenTelemetry instrumentation costs kafkawire's send and consume paths, one run.

On the embedded Tansu broker, RECORDS records of 100 bytes are sent (``send`` in a loop, then
``flush``) and consumed from one partition (``async for``, and ``getmany`` in batches) in each
of four states, interleaved per round, the best round counting:

- ``off``: never instrumented (the classes' own functions);
- ``no SDK``: instrumented, with OpenTelemetry's API only (no-op tracer and meter: a program
  run under ``opentelemetry-instrument`` whose spans go nowhere);
- ``SDK``: instrumented, every span recorded (the SDK's batch processor, an exporter that
  drops them) and every metric aggregated (the SDK's meter provider, a reader);
- ``removed``: after ``uninstrument()``, which must cost nothing again.

The topic consumed holds records written by an instrumented producer (each with its
``traceparent`` header), so the consumer's extraction and links are measured. Prints
records/s, each state's ratio to ``off`` and the time it adds to each record. Set
KAFKAWIRE_BENCH_RECORDS to change the count.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.instrumentation import KafkawireInstrumentor
from kafkawire.producer import Producer
from kafkawire.testing import TansuBroker

RECORDS = int(os.environ.get("KAFKAWIRE_BENCH_RECORDS", "50000"))
ROUNDS = 3
VALUE = b"x" * 100
CONSUMED = "bench-instrumentation-consumed"
_sent_topics = (f"bench-instrumentation-sent-{i}" for i in itertools.count())


class _Dropped(SpanExporter):
    """An exporter that exports nothing: what is measured is the instrumentation's work."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def _instrument_with_sdk() -> Callable[[], None]:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(_Dropped()))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    KafkawireInstrumentor().instrument(
        tracer_provider=tracer_provider, meter_provider=meter_provider
    )

    def remove() -> None:
        KafkawireInstrumentor().uninstrument()
        tracer_provider.shutdown()
        meter_provider.shutdown()

    return remove


def _instrument_without_sdk() -> Callable[[], None]:
    KafkawireInstrumentor().instrument(
        tracer_provider=trace.NoOpTracerProvider(), meter_provider=metrics.NoOpMeterProvider()
    )
    return KafkawireInstrumentor().uninstrument


def _nothing() -> Callable[[], None]:
    return lambda: None


# Each state: what sets it up, returning what undoes it. ``removed`` comes after the rest.
STATES: dict[str, Callable[[], Callable[[], None]]] = {
    "off": _nothing,
    "no SDK": _instrument_without_sdk,
    "SDK": _instrument_with_sdk,
    "removed": _nothing,
}

Path = Callable[[str], Awaitable[int]]


async def _send(bootstrap: str) -> int:
    topic = next(_sent_topics)
    async with Producer(bootstrap, linger_ms=5) as producer:
        for _ in range(RECORDS):
            await producer.send(topic, VALUE, partition=0)
        await producer.flush()
    return RECORDS


async def _iterate(bootstrap: str) -> int:
    count = 0
    async with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(CONSUMED, 0)])
        async for _ in consumer:
            count += 1
            if count == RECORDS:
                break
    return count


async def _getmany(bootstrap: str) -> int:
    count = 0
    async with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(CONSUMED, 0)])
        while count < RECORDS:
            for records in (await consumer.getmany(timeout_ms=1000, max_records=500)).values():
                count += len(records)
    return count


PATHS: dict[str, Path] = {"send": _send, "async for": _iterate, "getmany": _getmany}


async def _fill(bootstrap: str) -> None:
    """The consumed topic, written by an instrumented producer: each record has a context."""
    remove = _instrument_with_sdk()
    try:
        async with Producer(bootstrap, linger_ms=5) as producer:
            for _ in range(RECORDS):
                await producer.send(CONSUMED, VALUE, partition=0)
            await producer.flush()
    finally:
        remove()


async def _measure(bootstrap: str) -> dict[tuple[str, str], float]:
    best: dict[tuple[str, str], float] = {}
    for _ in range(ROUNDS):
        for state, set_up in STATES.items():
            remove = set_up()
            try:
                for path, run in PATHS.items():
                    start = time.perf_counter()
                    count = await run(bootstrap)
                    rate = count / (time.perf_counter() - start)
                    best[path, state] = max(best.get((path, state), 0.0), rate)
            finally:
                remove()
    return best


def _report(best: dict[tuple[str, str], float]) -> None:
    """Records/s per path and state, each state's ratio to ``off`` and the time it adds to
    each record (µs)."""
    print(f"instrumentation: {RECORDS} records of {len(VALUE)} bytes, best of {ROUNDS} rounds")
    for path in PATHS:
        off = best[path, "off"]
        cells = []
        for state in STATES:
            rate = best[path, state]
            added = (1 / rate - 1 / off) * 1e6
            cells.append(f"{state} {rate:9,.0f}/s x{rate / off:.2f} {added:+6.1f} µs")
        print(f"  {path:10} " + "  ".join(cells))


def main() -> None:
    async def run() -> Any:
        async with TansuBroker() as broker:
            await _fill(broker.bootstrap)
            _report(await _measure(broker.bootstrap))

    asyncio.run(run())


if __name__ == "__main__":
    main()
