"""Instrumenting and uninstrumenting, ``opentelemetry-instrument`` finding the instrumentor, and
what an uninstrumented kafkawire imports: nothing of OpenTelemetry."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from kafkawire.consumer import Consumer, ShareConsumer
from kafkawire.instrumentation import KafkawireInstrumentor
from kafkawire.instrumentation._semconv import Naming
from kafkawire.producer import Producer
from kafkawire.testing.fake import FakeCluster

WRAPPED = [
    (Producer, "send"),
    *((cls, m) for cls in (Consumer, ShareConsumer) for m in ("getmany", "__anext__", "close")),
]


def run(code: str, *command: str) -> str:
    result = subprocess.run(
        [*command, sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return result.stdout.strip()


async def test_uninstrument_gives_the_classes_their_own_functions_back(
    fake_cluster: FakeCluster,
) -> None:
    own = {(cls, name): cls.__dict__[name] for cls, name in WRAPPED}
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = KafkawireInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        assert all(cls.__dict__[name] is not own[cls, name] for cls, name in WRAPPED)
        fake_cluster.create_topic("t")
        fake_cluster.produce("t", 0, [b"before"])
        consumer = Consumer(
            "t", bootstrap_servers=fake_cluster.bootstrap, auto_offset_reset="earliest"
        )
        await consumer.start()
        await anext(consumer)  # its process span is open
    finally:
        instrumentor.uninstrument()
    assert {(cls, name): cls.__dict__[name] for cls, name in WRAPPED} == own
    assert [s.name for s in exporter.get_finished_spans()] == ["t process"]  # ended on removal
    await consumer.close()
    async with Producer(fake_cluster.bootstrap) as producer:
        await producer.send_and_wait("t", b"after")
    assert fake_cluster.records("t", 0)[1].headers == ()
    assert len(exporter.get_finished_spans()) == 1


def test_opentelemetry_instrument_finds_and_applies_the_instrumentor() -> None:
    # The SDK is set up after the instrumentation, as a program run under
    # opentelemetry-instrument without a distro does: the tracer follows the global provider.
    code = """
        import asyncio
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from kafkawire.instrumentation import KafkawireInstrumentor
        from kafkawire.producer import Producer
        from kafkawire.testing.fake import FakeCluster

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)

        async def main():
            async with FakeCluster(num_brokers=1) as cluster:
                cluster.create_topic("orders")
                async with Producer(cluster.bootstrap) as producer:
                    await producer.send_and_wait("orders", b"1")
                return [h.key for h in cluster.records("orders", 0)[0].headers]

        headers = asyncio.run(main())
        print(KafkawireInstrumentor().is_instrumented_by_opentelemetry)
        print([s.name for s in exporter.get_finished_spans()], headers)
    """
    instrument = str(Path(sys.executable).with_name("opentelemetry-instrument"))
    assert run(code, instrument).splitlines() == ["True", "['orders send'] ['traceparent']"]


def test_uninstrumented_clients_produce_and_consume_without_importing_opentelemetry() -> None:
    # OpenTelemetry is installed here: nothing may load it unless instrument() is called.
    code = """
        import asyncio, sys
        import kafkawire, kafkawire.admin, kafkawire.client
        from kafkawire.consumer import Consumer, ShareConsumer
        from kafkawire.producer import Producer
        from kafkawire.testing.fake import FakeCluster

        async def main():
            async with FakeCluster(num_brokers=1) as cluster:
                cluster.create_topic("orders")
                async with Producer(cluster.bootstrap) as producer:
                    await producer.send_and_wait("orders", b"1")
                async with Consumer(
                    "orders", bootstrap_servers=cluster.bootstrap, auto_offset_reset="earliest"
                ) as consumer:
                    record = await anext(consumer)
                    batches = await consumer.getmany(timeout_ms=0)
                return record.value, record.headers, batches

        print(asyncio.run(main()))
        print(sorted({m.partition('.')[0] for m in sys.modules} & {'opentelemetry', 'wrapt'}))
    """
    assert run(code).splitlines() == ["(b'1', (), {})", "[]"]


def test_without_the_extra_the_clients_work_and_the_instrumentation_says_what_to_install() -> None:
    # None in sys.modules makes an import fail as a package that is not installed does.
    code = """
        import sys
        sys.modules['opentelemetry'] = None
        import kafkawire.producer, kafkawire.consumer
        try:
            import kafkawire.instrumentation
        except ModuleNotFoundError as error:
            print(error)
    """
    assert run(code) == (
        "kafkawire.instrumentation needs opentelemetry.instrumentation, which the otel extra "
        "installs: pip install 'kafkawire[otel]'"
    )


def test_the_opt_in_to_the_current_conventions_names_spans_operation_first() -> None:
    default = Naming.from_environment({})
    current = Naming.from_environment({"OTEL_SEMCONV_STABILITY_OPT_IN": "http, messaging/dup"})
    assert (default.span_name("send", "orders"), default.receive_kind) == (
        "orders send",
        SpanKind.CONSUMER,
    )
    assert (current.span_name("send", "orders"), current.receive_kind) == (
        "send orders",
        SpanKind.CLIENT,
    )
    assert current.span_name("receive", None) == "receive"
