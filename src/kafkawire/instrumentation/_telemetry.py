"""One instrumentation's tracer, instruments and naming, and how an operation's span ends.

The metrics are the conventions' messaging client metrics: ``messaging.client.operation.duration``
(a send, from ``send()`` until its delivery resolves; a receive, one ``getmany``),
``messaging.client.sent.messages`` (each record whose delivery resolved, failed ones with
``error.type``), ``messaging.client.consumed.messages`` (each record handed to the
application) and ``messaging.process.duration`` (each record an ``async for`` processed).
Their attributes are the conventions' (no ``messaging.client.id``: it would make a series per
client); a span has the same, with the client id and the per-record ones.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, Status, StatusCode

import kafkawire

from ._semconv import (
    CLIENT_ID,
    DURATION_BUCKETS,
    ERROR_TYPE,
    Naming,
    client_attributes,
    error_type,
)

__all__ = ["ClientAttributes", "Telemetry"]


@dataclass(frozen=True, slots=True)
class ClientAttributes:
    """A client's attributes: for its metrics, and for its spans (those and its id)."""

    metric: dict[str, Any]
    span: dict[str, Any]


class Telemetry:
    """What the wrappers of one ``instrument()`` share."""

    def __init__(self, tracer_provider: Any, meter_provider: Any, naming: Naming) -> None:
        self.naming = naming
        self.tracer = trace.get_tracer(
            "kafkawire", kafkawire.__version__, tracer_provider=tracer_provider
        )
        meter = metrics.get_meter("kafkawire", kafkawire.__version__, meter_provider=meter_provider)
        self.duration = meter.create_histogram(
            "messaging.client.operation.duration",
            unit="s",
            description="Duration of messaging operation initiated by a producer or consumer "
            "client.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.sent = meter.create_counter(
            "messaging.client.sent.messages",
            unit="{message}",
            description="Number of messages producer attempted to send to the broker.",
        )
        self.consumed = meter.create_counter(
            "messaging.client.consumed.messages",
            unit="{message}",
            description="Number of messages that were delivered to the application.",
        )
        self.process_duration = meter.create_histogram(
            "messaging.process.duration",
            unit="s",
            description="Duration of processing operation.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        # Per client, computed at its first operation (weakly: a client closed and dropped
        # takes its entry with it).
        self._clients: WeakKeyDictionary[object, ClientAttributes] = WeakKeyDictionary()

    def client(self, client: Any) -> ClientAttributes:
        found = self._clients.get(client)
        if found is None:
            metric = client_attributes(client.settings)
            span = {**metric, CLIENT_ID: client.settings.client_id}
            found = self._clients[client] = ClientAttributes(metric, span)
        return found

    def end_operation(
        self, span: Span, start: int, attributes: dict[str, Any], error: BaseException | None
    ) -> None:
        """End ``span`` (started at ``start``, ns) and record its duration with
        ``attributes`` (``error.type`` added to both if ``error``)."""
        end = time.time_ns()
        if error is not None:
            set_error(span, attributes, error)
        span.end(end_time=end)
        self.duration.record((end - start) / 1e9, attributes)


def set_error(span: Span, attributes: dict[str, Any], error: BaseException) -> None:
    """Mark ``span`` (and the metric ``attributes``) as ended by ``error``."""
    attributes[ERROR_TYPE] = kind = error_type(error)
    span.set_attribute(ERROR_TYPE, kind)
    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, str(error)))
