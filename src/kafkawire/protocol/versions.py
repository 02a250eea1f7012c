"""Moving a message to another version of the same API, by Kafka's rules for dropped fields.

Callers build a request at the newest version they know and the connection converts it to the
version the broker negotiated. Fields carry over by name, recursively through nested structs.
A field the target version lacks may be dropped only if it holds its default or the schema
marks it ``ignorable`` (Kafka's own rule: losing it does not change what the request means);
otherwise the conversion fails, naming the field, rather than silently sending a request that
means something else. Fields the target has and the source lacks take their defaults.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, TypeVar

from kafkawire.errors import ProtocolError
from kafkawire.messages import request_type, response_type

from ._fields import default_of, struct_of

__all__ = ["VersionConversionError", "convert", "struct_type"]


class VersionConversionError(ProtocolError):
    """A message that cannot be expressed at the requested version without changing meaning."""


T = TypeVar("T")
_UNKNOWN_TAGS = "unknown_tagged_fields"


def convert(message: Any, version: int) -> Any:
    """The same request or response at ``version`` (the message itself if already there)."""
    cls = type(message)
    if cls.__version__ == version:
        return message
    lookup = request_type if cls.__kind__ == "request" else response_type
    return _convert(message, lookup(cls.__api_key__, version), cls.__name__)


def struct_type(cls: type[Any], field: str) -> type[Any]:
    """The struct class of ``cls``'s field ``field`` (or of its elements, for an array).

    For building a request at a version chosen at run time:
    ``struct_type(request_type(0, v), "topic_data")`` is that version's TopicProduceData.
    """
    found = struct_of(typing.get_type_hints(cls)[field])
    if found is None:
        raise TypeError(f"{cls.__name__}.{field} is not a struct or an array of structs")
    return found


def _convert(value: Any, target: type[Any], path: str) -> Any:
    source_fields = {f.name: f for f in dataclasses.fields(value)}
    target_hints = typing.get_type_hints(target)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(target):
        if f.name == _UNKNOWN_TAGS or f.name not in source_fields:
            continue
        item = getattr(value, f.name)
        nested = struct_of(target_hints[f.name])
        if item is None and not f.metadata.get("nullable"):
            raise _lost(
                target, f"{path}.{f.name}", "is null, which the target version cannot express"
            )
        if nested is not None and item is not None:
            if f.metadata["kafka_type"].startswith("[]"):
                item = tuple(
                    _convert(x, nested, f"{path}.{f.name}[{i}]") for i, x in enumerate(item)
                )
            else:
                item = _convert(item, nested, f"{path}.{f.name}")
        kwargs[f.name] = item
    for name, f in source_fields.items():
        if name in kwargs or name == _UNKNOWN_TAGS or f.metadata.get("ignorable"):
            continue
        if getattr(value, name) != default_of(f):
            raise _lost(
                target, f"{path}.{name}", "is set, and the target version has no such field"
            )
    return target(**kwargs)


def _lost(target: type[Any], path: str, reason: str) -> VersionConversionError:
    return VersionConversionError(f"{path} {reason} (converting to version {target.__version__})")
