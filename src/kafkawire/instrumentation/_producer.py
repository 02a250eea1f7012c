"""The send span: one PRODUCER span per record, from ``send()`` until its delivery resolves.

The conventions make a send span cover "sending a message to an intermediary"; kafkawire's
``send`` only queues the record and the sender writes it later, in a batch, so the span ends
when the record's delivery resolves (the broker's answer, or the error that failed it), as the
Java agent ends it in the send callback. The span then gets the partition the record went to
and its offset. A ``send()`` that raises ends the span at once, with the error; it sent
nothing, so ``messaging.client.sent.messages`` does not count it. ``send_and_wait`` calls
``send``: one span each.

The span's context goes into the record's headers (:mod:`._carrier`), unless the application
put a context there itself: then the span links to that one.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry.trace import Link, Span, SpanKind

from kafkawire.producer import Delivery

from ._carrier import creation_context, headers_with_context
from ._semconv import (
    DESTINATION,
    KAFKA_KEY,
    KAFKA_OFFSET,
    KAFKA_TOMBSTONE,
    OPERATION_NAME,
    OPERATION_TYPE,
    PARTITION,
    SEND,
    key_attribute,
)
from ._telemetry import Telemetry

__all__ = ["Wrapper", "traced_send"]

Wrapper = Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], Awaitable[Any]]


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], position: int, name: str) -> Any:
    return args[position] if len(args) > position else kwargs.get(name)


def traced_send(telemetry: Telemetry) -> Wrapper:
    """The wrapper of ``Producer.send`` (see the module's docstring)."""
    tracer, naming = telemetry.tracer, telemetry.naming

    async def send(
        wrapped: Callable[..., Awaitable[Delivery]],
        producer: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Delivery:
        topic = _argument(args, kwargs, 0, "topic")
        headers = kwargs.get("headers")
        if not isinstance(topic, str) or not isinstance(headers, list | tuple | None):
            return await wrapped(*args, **kwargs)  # the producer refuses it, with its error
        client = telemetry.client(producer)
        metric = {**client.metric, OPERATION_NAME: SEND, OPERATION_TYPE: SEND, DESTINATION: topic}
        partition = kwargs.get("partition")
        if type(partition) is int:
            metric[PARTITION] = str(partition)
        attributes = {**client.span, **metric}
        key = key_attribute(_argument(args, kwargs, 2, "key"))
        if key is not None:
            attributes[KAFKA_KEY] = key
        if _argument(args, kwargs, 1, "value") is None:
            attributes[KAFKA_TOMBSTONE] = True
        given = creation_context(headers) if headers else None
        start = time.time_ns()
        span = tracer.start_span(
            naming.span_name(SEND, topic),
            kind=SpanKind.PRODUCER,
            attributes=attributes,
            links=None if given is None else (Link(given[1]),),
            start_time=start,
        )
        if given is None:
            kwargs["headers"] = headers_with_context(headers or (), span)
        try:
            delivery = await wrapped(*args, **kwargs)
        except BaseException as error:
            telemetry.end_operation(span, start, metric, error)
            raise
        delivery.add_done_callback(functools.partial(_delivered, telemetry, span, start, metric))
        return delivery

    return send


def _delivered(
    telemetry: Telemetry, span: Span, start: int, metric: dict[str, Any], delivery: Delivery
) -> None:
    """The record's delivery resolved: the send span ends, the record is counted as sent."""
    try:
        metadata = delivery.result()
    except BaseException as error:
        telemetry.end_operation(span, start, metric, error)
    else:
        metric[PARTITION] = partition = str(metadata.partition)
        span.set_attribute(PARTITION, partition)
        if metadata.offset >= 0:
            span.set_attribute(KAFKA_OFFSET, metadata.offset)
        telemetry.end_operation(span, start, metric, None)
    telemetry.sent.add(1, metric)
