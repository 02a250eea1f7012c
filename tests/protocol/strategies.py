"""Hypothesis strategies for generated messages, read from their field metadata.

Written independently of the serializer's own planning, so the round trips check the codec
against the metadata rather than against itself.
"""

from __future__ import annotations

import dataclasses
import typing
from functools import cache
from typing import Any

from hypothesis import strategies as st

_INTEGERS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_MAX_TAG = 2**31 - 1
_text = st.text(st.characters(codec="utf-8"), max_size=12)


def _struct_of(hint: Any) -> type[Any]:
    stack = [hint]
    while stack:
        item = stack.pop()
        if dataclasses.is_dataclass(item) and isinstance(item, type):
            return item
        stack.extend(typing.get_args(item))
    raise AssertionError(f"no struct in {hint}")


def _scalar(kafka_type: str, hint: Any) -> st.SearchStrategy[Any]:
    if kafka_type in _INTEGERS:
        low, high = _INTEGERS[kafka_type]
        return st.integers(low, high)
    simple: dict[str, st.SearchStrategy[Any]] = {
        "bool": st.booleans(),
        "float64": st.floats(allow_nan=False),
        "string": _text,
        "bytes": st.binary(max_size=12),
        "records": st.binary(max_size=40),
        "uuid": st.uuids(),
    }
    if kafka_type in simple:
        return simple[kafka_type]
    return message_strategy(_struct_of(hint))


def _unknown_tags(known: set[int]) -> st.SearchStrategy[tuple[tuple[int, bytes], ...]]:
    tag = st.integers(0, _MAX_TAG).filter(lambda t: t not in known)
    pairs = st.lists(st.tuples(tag, st.binary(max_size=6)), max_size=2, unique_by=lambda p: p[0])
    return pairs.map(lambda items: tuple(sorted(items)))


@cache
def message_strategy(cls: type[Any]) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    known_tags = {f.metadata["tag"] for f in fields if "tag" in f.metadata}
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for f in fields:
        kafka_type: str = f.metadata["kafka_type"]
        if kafka_type == "tagged_fields":
            kwargs[f.name] = _unknown_tags(known_tags)
            continue
        element = _scalar(kafka_type.removeprefix("[]"), hints[f.name])
        value = st.lists(element, max_size=3).map(tuple) if kafka_type.startswith("[]") else element
        kwargs[f.name] = st.none() | value if f.metadata.get("nullable") else value
    return st.builds(cls, **kwargs)
