"""OpenTelemetry traces and metrics of kafkawire's producers and consumers (the ``otel`` extra).

::

    from kafkawire.instrumentation import KafkawireInstrumentor

    KafkawireInstrumentor().instrument()  # or run the program under opentelemetry-instrument

Spans and metrics follow OpenTelemetry's messaging semantic conventions for Kafka
(:mod:`._semconv` says which names): a PRODUCER "send" span per record, from ``send()`` until
its delivery resolves (:mod:`._producer`); a "receive" span per ``getmany`` that returns
records, linked to each record's producer, and a "process" span per record an ``async for``
hands out, current while the loop's body runs (:mod:`._consumer`). The creation context
travels in the record's headers (W3C ``traceparent``: :mod:`._carrier`). Metrics:
``messaging.client.operation.duration``, ``messaging.client.sent.messages``,
``messaging.client.consumed.messages``, ``messaging.process.duration`` (:mod:`._telemetry`).

Only this package imports OpenTelemetry; without the extra, importing it says what to install.
"""

try:
    from ._instrumentor import KafkawireInstrumentor
except ModuleNotFoundError as missing:
    if missing.name is None or missing.name.partition(".")[0] not in ("opentelemetry", "wrapt"):
        raise
    raise ModuleNotFoundError(
        f"kafkawire.instrumentation needs {missing.name}, which the otel extra installs: "
        "pip install 'kafkawire[otel]'",
        name=missing.name,
    ) from missing

__all__ = ["KafkawireInstrumentor"]
