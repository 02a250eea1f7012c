"""Building a response at the version its request came in, from one set of values for all.

A handler names every value it knows (``build(cls, high_watermark=..., diverging_epoch=...)``)
and the version's class keeps the fields it has: a broker writing an older version leaves out
what that version lacks, and so does this. Nested struct classes come from the field that
holds them (``part(cls, "partitions")``), so one handler serves every version without naming a
versioned module.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from kafkawire.messages import response_type
from kafkawire.protocol import struct_type

__all__ = ["build", "has", "nested", "part", "response_class"]

T = TypeVar("T")
_FIELDS: dict[type[Any], frozenset[str]] = {}


def _names(cls: type[Any]) -> frozenset[str]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    return names


def has(cls: type[Any], name: str) -> bool:
    """Whether this version of a message or struct has the field ``name``."""
    return name in _names(cls)


def build(cls: type[T], /, **values: Any) -> T:
    """``cls(**values)`` without the values ``cls``'s version has no field for."""
    names = _names(cls)
    return cls(**{key: value for key, value in values.items() if key in names})


def part(cls: type[Any], name: str) -> type[Any]:
    """The struct class of ``cls``'s field ``name`` (of its elements, for an array)."""
    return struct_type(cls, name)


def nested(cls: type[Any], name: str, /, **values: Any) -> Any:
    """``build`` of the struct in ``cls``'s field ``name``; None if this version lacks the
    field (which ``build`` then leaves out)."""
    if not has(cls, name):
        return None
    return build(part(cls, name), **values)


def response_class(api_key: int, version: int) -> type[Any]:
    return response_type(api_key, version)
