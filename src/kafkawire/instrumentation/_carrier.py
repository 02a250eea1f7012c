"""A record's creation context in its headers: W3C ``traceparent`` (and whatever else the
configured propagators write, ``tracestate`` and ``baggage`` by default), as the Java agent
and the contrib instrumentations carry it, so that traces cross clients.

The application's headers are never changed in place: a send gets a new list, its headers
first (tuples or :class:`~kafkawire.records.Header` values, as given) and then the context's.
A context the application put there itself wins: nothing is added then, and the send span
links to it, as the conventions ask.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import Getter
from opentelemetry.trace import Span, SpanContext

from kafkawire.records import Header, HeaderInput

__all__ = ["creation_context", "headers_with_context"]


def _pairs(headers: Sequence[Any]) -> Iterator[tuple[str, bytes | None]]:
    """Each ``(key, value)`` of ``headers``, skipping what is neither a pair nor a Header
    (the producer refuses those itself, with its own error)."""
    for header in headers:
        if isinstance(header, Header):
            yield header.key, header.value
        elif isinstance(header, tuple) and len(header) == 2:
            yield header


class _HeaderGetter(Getter[Sequence[Any]]):
    def get(self, carrier: Sequence[Any], key: str) -> list[str] | None:
        for name, value in _pairs(carrier):
            if name == key and value is not None:
                try:
                    return [bytes(value).decode()]
                except UnicodeDecodeError:
                    return None
        return None

    def keys(self, carrier: Sequence[Any]) -> list[str]:
        return [name for name, _ in _pairs(carrier)]


_GETTER = _HeaderGetter()


def creation_context(headers: Sequence[Any]) -> tuple[Context, SpanContext] | None:
    """The context a record's headers carry (with its span's context), if they carry one."""
    context = propagate.extract(headers, getter=_GETTER)
    span_context = trace.get_current_span(context).get_span_context()
    return (context, span_context) if span_context.is_valid else None


def headers_with_context(headers: Sequence[HeaderInput], span: Span) -> list[HeaderInput]:
    """A new list: ``headers``, then ``span``'s context under each key they lack."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=trace.set_span_in_context(span))
    present = {name for name, _ in _pairs(headers)}
    added = [(name, value.encode()) for name, value in carrier.items() if name not in present]
    return [*headers, *added]
