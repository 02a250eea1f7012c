"""The consumer's spans: a receive span per ``getmany``, a process span per record iterated.
The same for a consumer and a share consumer (KIP-932), whose group is its share group.

``getmany`` is the application asking for a batch: one "receive" span (CONSUMER by default,
CLIENT with the current conventions: :mod:`._semconv`) from the call until it returns, made
only when it returns records (a poll that times out empty is no operation worth a span or a
metric), with ``messaging.batch.message_count`` and a link to each record's creation context,
as the conventions ask of batch receives (a span has one parent, and a batch many producers);
its topic and partition when all its records share them. A ``getmany`` that raises gets a
receive span with the error.

``async for record in consumer`` hands out one record at a time, so each gets a "process"
span (CONSUMER) that starts when the record is handed out and ends when the application asks
for the next one, leaves the loop at its end, closes the consumer or calls ``getmany``: the
span covers what the loop's body did with the record, and is the current span while it runs,
so the spans the body makes are its children. It links to the record's creation context,
and has it as its parent too when no span was current around the loop (a worker's loop,
usually): the trace then runs from the producer's send through the processing, as the Java
agent's process spans do. Inside a span of the application's (a request being served), that
span stays the parent, as the conventions recommend, and the link alone ties the record to
its producer. The fetches an iteration makes to fill its buffer are not receive spans: the
records they bring are not handed out yet (the conventions forbid spans for prefetched
records). A loop left by ``break`` ends its last span at the next of those calls.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from opentelemetry import context, trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind

from kafkawire.consumer import ConsumerRecord, TopicPartition

from ._carrier import creation_context
from ._semconv import (
    BATCH_MESSAGE_COUNT,
    DESTINATION,
    KAFKA_KEY,
    KAFKA_OFFSET,
    KAFKA_TOMBSTONE,
    OPERATION_NAME,
    OPERATION_TYPE,
    PARTITION,
    PROCESS,
    RECEIVE,
    key_attribute,
)
from ._telemetry import Telemetry

__all__ = ["ConsumerTracing"]

Batches = dict[TopicPartition, list[ConsumerRecord]]

# Set while ``__anext__`` fetches for its buffer: that getmany hands nothing to the application.
_ITERATING: ContextVar[bool] = ContextVar("kafkawire_iterating", default=False)


@dataclass(frozen=True, slots=True)
class _Processing:
    """The process span of the record an iteration handed out last."""

    span: Span
    context: Context  # the context made current with it
    token: Token[Context]  # what makes the context before it current again
    start: int
    metric: dict[str, Any]


class ConsumerTracing:
    """The wrappers of one consumer class's ``getmany``, ``__anext__`` and ``close``, and
    the process span each consumer's iteration has open."""

    def __init__(self, telemetry: Telemetry) -> None:
        self._telemetry = telemetry
        self._open: WeakKeyDictionary[object, _Processing] = WeakKeyDictionary()

    # --- the wrappers --------------------------------------------------------------------------

    async def getmany(
        self,
        wrapped: Callable[..., Awaitable[Batches]],
        consumer: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Batches:
        if _ITERATING.get():
            return await wrapped(*args, **kwargs)
        self.end_processing(consumer)
        start = time.time_ns()
        try:
            batches = await wrapped(*args, **kwargs)
        except Exception as error:
            self._receive_failed(consumer, start, error)
            raise
        if batches:
            self._received(consumer, batches, start)
        return batches

    async def anext(
        self,
        wrapped: Callable[..., Awaitable[ConsumerRecord]],
        consumer: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> ConsumerRecord:
        self.end_processing(consumer)  # asking for the next record ends the last one's
        token = _ITERATING.set(True)
        try:
            record = await wrapped(*args, **kwargs)
        finally:
            _ITERATING.reset(token)
        self._start_processing(consumer, record)
        return record

    async def close(
        self,
        wrapped: Callable[..., Awaitable[None]],
        consumer: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        self.end_processing(consumer)
        await wrapped(*args, **kwargs)

    # --- receive ---------------------------------------------------------------------------------

    def _received(self, consumer: Any, batches: Batches, start: int) -> None:
        telemetry = self._telemetry
        client = telemetry.client(consumer)
        metric = {**client.metric, OPERATION_NAME: RECEIVE, OPERATION_TYPE: RECEIVE}
        topics = {tp.topic for tp in batches}
        topic = topics.pop() if len(topics) == 1 else None
        if topic is not None:
            metric[DESTINATION] = topic
        if len(batches) == 1:
            metric[PARTITION] = str(next(iter(batches)).partition)
        count = sum(map(len, batches.values()))
        links = [
            Link(found[1])
            for records in batches.values()
            for record in records
            if record.headers and (found := creation_context(record.headers)) is not None
        ]
        span = telemetry.tracer.start_span(
            telemetry.naming.span_name(RECEIVE, topic),
            kind=telemetry.naming.receive_kind,
            attributes={**client.span, **metric, BATCH_MESSAGE_COUNT: count},
            links=links,
            start_time=start,
        )
        telemetry.end_operation(span, start, metric, None)
        for tp, records in batches.items():
            consumed = {**metric, DESTINATION: tp.topic, PARTITION: str(tp.partition)}
            telemetry.consumed.add(len(records), consumed)

    def _receive_failed(self, consumer: Any, start: int, error: Exception) -> None:
        telemetry = self._telemetry
        client = telemetry.client(consumer)
        metric = {**client.metric, OPERATION_NAME: RECEIVE, OPERATION_TYPE: RECEIVE}
        span = telemetry.tracer.start_span(
            telemetry.naming.span_name(RECEIVE, None),
            kind=telemetry.naming.receive_kind,
            attributes={**client.span, **metric},
            start_time=start,
        )
        telemetry.end_operation(span, start, metric, error)

    # --- process -------------------------------------------------------------------------------

    def _start_processing(self, consumer: Any, record: ConsumerRecord) -> None:
        telemetry = self._telemetry
        client = telemetry.client(consumer)
        metric = {
            **client.metric,
            OPERATION_NAME: PROCESS,
            OPERATION_TYPE: PROCESS,
            DESTINATION: record.topic,
            PARTITION: str(record.partition),
        }
        attributes = {**client.span, **metric, KAFKA_OFFSET: record.offset}
        key = key_attribute(record.key)
        if key is not None:
            attributes[KAFKA_KEY] = key
        if record.value is None:
            attributes[KAFKA_TOMBSTONE] = True
        found = creation_context(record.headers) if record.headers else None
        parent = None  # the current context, and its span if it has one
        if found is not None and not trace.get_current_span().get_span_context().is_valid:
            parent = found[0]
        start = time.time_ns()
        span = telemetry.tracer.start_span(
            telemetry.naming.span_name(PROCESS, record.topic),
            context=parent,
            kind=SpanKind.CONSUMER,
            attributes=attributes,
            links=None if found is None else (Link(found[1]),),
            start_time=start,
        )
        current = trace.set_span_in_context(span, parent)
        token = context.attach(current)
        self._open[consumer] = _Processing(span, current, token, start, metric)
        telemetry.consumed.add(1, metric)

    def end_processing(self, consumer: Any) -> None:
        """End the process span the consumer's iteration has open, if it has one; and make
        the context before it current again, where it is still the current one (an
        iteration's own task; not another task closing the consumer)."""
        processing = self._open.pop(consumer, None)
        if processing is None:
            return
        if context.get_current() is processing.context:
            context.detach(processing.token)
        end = time.time_ns()
        processing.span.end(end_time=end)
        self._telemetry.process_duration.record((end - processing.start) / 1e9, processing.metric)

    def end_all(self) -> None:
        """End every open process span (when the instrumentation is removed)."""
        for consumer in list(self._open):
            self.end_processing(consumer)
