"""Hypothesis strategies that build valid instances of kafkawire's generated message classes.

Needs `hypothesis`, which ``pip install 'kafkawire[testing]'`` brings (``import
kafkawire.testing`` alone does not import it)::

    @given(messages(ProduceRequest))
    def test_produce_round_trip(request: ProduceRequest) -> None:
        assert decode(ProduceRequest, encode(request)) == request

The strategies read each field's wire facts (the ``kafka_type``, ``nullable`` and ``tag``
metadata that codegen writes), not only its Python annotation: an ``int16`` field gets integers
that fit 16 bits, ``None`` appears only where the class's version allows it, nested structs
are those of the class's own version, and ``unknown_tagged_fields`` holds tags the class does
not know, in ascending order, as Kafka writes them. Strings, byte strings and arrays stay short,
so examples are quick to build and to shrink. kafkawire's own round-trip tests use them on
every generated class.

Importing this module does not make ``st.from_type(ProduceRequest)`` use them: hypothesis
looks registrations up by exact class, and registering every generated class up front would
import all of them (seconds). Register the classes a test suite uses instead::

    st.register_type_strategy(ProduceRequest, messages(ProduceRequest))
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Literal, TypeVar

from hypothesis import strategies as st

from kafkawire.messages import request_type, response_type
from kafkawire.protocol.primitives import INTEGER_RANGES

__all__ = ["messages", "messages_of"]

T = TypeVar("T")

# Kafka reads a tag (an unsigned varint) into a signed 32-bit int.
_MAX_TAG = 2**31 - 1
_SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "bool": st.booleans(),
    "float64": st.floats(allow_nan=False),  # NaN would make equal messages compare unequal
    "string": st.text(st.characters(codec="utf-8"), max_size=12),
    "bytes": st.binary(max_size=12),
    "records": st.binary(max_size=40),
    "uuid": st.uuids(),
    **{name: st.integers(low, high) for name, (low, high) in INTEGER_RANGES.items()},
}


def messages(cls: type[T]) -> st.SearchStrategy[T]:
    """Instances of the generated class ``cls`` that kafkawire can encode and decode back.

    Any generated class works: a request or response of one version (such as
    ``kafkawire.messages.produce.v11.ProduceRequest``), a nested struct, a header or a data
    message (``ConsumerProtocolSubscription``).
    """
    strategy = _BUILT.get(cls)
    if strategy is None:
        strategy = _BUILT[cls] = _build(cls)
    return strategy


def messages_of(
    api_key: int, version: int, kind: Literal["request", "response"] = "request"
) -> st.SearchStrategy[Any]:
    """Instances of the request (or response) class of API ``api_key`` at ``version``.

    Raises :class:`kafkawire.errors.UnknownMessageError` for a key or version kafkawire does not
    generate.
    """
    lookup = request_type if kind == "request" else response_type
    return messages(lookup(api_key, version))


# One strategy per class, built on first use: the catalog's round trips ask for each many times.
_BUILT: dict[type[Any], st.SearchStrategy[Any]] = {}


def _build(cls: type[Any]) -> st.SearchStrategy[Any]:
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"{cls!r} is not a generated kafkawire message class")
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    known_tags = {f.metadata["tag"] for f in fields if "tag" in f.metadata}
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for f in fields:
        kafka_type: str = f.metadata["kafka_type"]
        if kafka_type == "tagged_fields":
            kwargs[f.name] = _unknown_tags(known_tags)
            continue
        element = _element(kafka_type.removeprefix("[]"), hints[f.name])
        value = st.lists(element, max_size=3).map(tuple) if kafka_type.startswith("[]") else element
        kwargs[f.name] = st.none() | value if f.metadata.get("nullable") else value
    return st.builds(cls, **kwargs)


def _element(kafka_type: str, hint: Any) -> st.SearchStrategy[Any]:
    """A value of one Kafka type; a struct's class is the one in the field's annotation."""
    if kafka_type in _SCALARS:
        return _SCALARS[kafka_type]
    stack = [hint]
    while stack:
        item = stack.pop()
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            return messages(item)
        stack.extend(typing.get_args(item))
    raise TypeError(f"no wire type {kafka_type!r} and no struct class in {hint!r}")


def _unknown_tags(known: set[int]) -> st.SearchStrategy[tuple[tuple[int, bytes], ...]]:
    tag = st.integers(0, _MAX_TAG).filter(lambda t: t not in known)
    pairs = st.lists(st.tuples(tag, st.binary(max_size=6)), max_size=2, unique_by=lambda p: p[0])
    return pairs.map(lambda items: tuple(sorted(items)))
