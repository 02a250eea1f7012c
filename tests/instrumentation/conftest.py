"""An instrumented kafkawire whose spans and metrics are kept in memory, for one test."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.instrumentation import KafkawireInstrumentor


def ids(context: Any) -> tuple[int, int]:
    """A span context's trace and span ids (what a remote copy of it shares)."""
    return context.trace_id, context.span_id


@dataclass
class Recorded:
    """What the instrumentation recorded, and a tracer of the same provider for the test's own
    spans."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer: Tracer

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        """The finished spans (named ``name``), in the order they ended."""
        found = self.exporter.get_finished_spans()
        return [s for s in found if name is None or s.name == name]

    def span(self, name: str) -> ReadableSpan:
        [span] = self.spans(name)
        return span

    def points(self, metric: str) -> list[tuple[dict[str, Any], Any]]:
        """Each data point of ``metric``: its attributes and the point."""
        data = self.reader.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data is not None else ():
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        found += [(dict(p.attributes or {}), p) for p in m.data.data_points]
        return found


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    instrumentor = KafkawireInstrumentor()
    instrumentor.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        yield Recorded(exporter, reader, tracer_provider.get_tracer("test"))
    finally:
        instrumentor.uninstrument()
        tracer_provider.shutdown()
        meter_provider.shutdown()


async def getmany_from_start(consumer: Consumer, tp: TopicPartition, count: int) -> None:
    """Assign ``tp`` alone and ``getmany`` it from offset 0 until ``count`` records came."""
    consumer.assign([tp])
    consumer.seek(tp, 0)
    got = 0
    while got < count:
        batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 10)
        got += sum(map(len, batches.values()))
