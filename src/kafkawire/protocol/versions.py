"""Moving a message to another version of the same API, by Kafka's rules for dropped fields.

Callers build a request at the newest version they know and the connection converts it to the
version the broker negotiated. Fields carry over by name, recursively through nested structs.
A field the target version lacks may be dropped only if it holds its default or the schema
marks it ``ignorable`` (Kafka's own rule: losing it does not change what the request means);
otherwise the conversion fails, naming the field, rather than silently sending a request that
means something else. Fields the target has and the source lacks take their defaults.

Two places where Kafka's ``ignorable`` flags are not enough, because one value means different
things at different versions:

- A struct that names a topic by name at one version and by topic id at another (Produce and
  Fetch from v13, and their responses) marks both fields ignorable; converting one into the
  other would name no topic at all (an all-zero id, an empty name), so it fails.
- MetadataRequest's ``topics``: at v0 an empty list asks for every topic; from v1 that is
  ``None``, and an empty list asks for none. The values are mapped; "no topics" cannot be
  asked at v0 and fails. (The schemas' other "empty or null means all" fields mean the same
  at every version that has them.)
"""

from __future__ import annotations

import dataclasses
import typing
import uuid
from typing import Any, TypeVar

from kafkawire.errors import ProtocolError
from kafkawire.messages import request_type, response_type

from ._fields import default_of, struct_of

__all__ = ["VersionConversionError", "convert", "struct_type"]


class VersionConversionError(ProtocolError):
    """A message that cannot be expressed at the requested version without changing meaning."""


T = TypeVar("T")
_UNKNOWN_TAGS = "unknown_tagged_fields"
_NO_TOPIC_ID = uuid.UUID(int=0)
# (kind, api key) -> (field, the versions at which an empty list of it means "all")
_EMPTY_MEANT_ALL = {("request", 3): ("topics", range(1))}


def convert(message: Any, version: int) -> Any:
    """The same request or response at ``version`` (the message itself if already there)."""
    cls = type(message)
    if cls.__version__ == version:
        return message
    lookup = request_type if cls.__kind__ == "request" else response_type
    target = lookup(cls.__api_key__, version)
    return _convert(_map_all(message, target), target, cls.__name__)


def _map_all(message: Any, target: type[Any]) -> Any:
    """``message`` with an "all" list spelled as ``target``'s version spells it."""
    cls = type(message)
    rule = _EMPTY_MEANT_ALL.get((cls.__kind__, cls.__api_key__))
    if rule is None:
        return message
    name, empty_means_all = rule
    value = getattr(message, name)
    before, after = cls.__version__ in empty_means_all, target.__version__ in empty_means_all
    if before and not after and value == ():
        return dataclasses.replace(message, **{name: None})
    if after and not before and value is None:
        return dataclasses.replace(message, **{name: ()})
    if after and not before and value == ():
        raise _lost(
            target,
            f"{cls.__name__}.{name}",
            "is empty (none), which the target version cannot ask: there an empty list means all",
        )
    return message


def struct_type(cls: type[Any], field: str) -> type[Any]:
    """The struct class of ``cls``'s field ``field`` (or of its elements, for an array).

    For building a request at a version chosen at run time:
    ``struct_type(request_type(0, v), "topic_data")`` is that version's TopicProduceData.
    """
    found = _nested_struct(cls, field)
    if found is None:
        raise TypeError(f"{cls.__name__}.{field} is not a struct or an array of structs")
    return found


def _nested_struct(cls: type[Any], field: str) -> type[Any] | None:
    """The struct class of ``cls``'s field ``field`` (or of its elements), ``None`` for a
    field of another type. Resolving type hints compiles their text (~5 ms for a request
    converted between versions): done once per class, for all its fields."""
    key = (cls, field)
    if key not in _STRUCTS:
        for name, hint in typing.get_type_hints(cls).items():
            _STRUCTS[(cls, name)] = struct_of(hint)
    return _STRUCTS[key]


_STRUCTS: dict[tuple[type[Any], str], type[Any] | None] = {}


def _convert(value: Any, target: type[Any], path: str) -> Any:
    source_fields = {f.name: f for f in dataclasses.fields(value)}
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(target):
        if f.name == _UNKNOWN_TAGS or f.name not in source_fields:
            continue
        item = getattr(value, f.name)
        nested = _nested_struct(target, f.name)
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
    converted = target(**kwargs)
    if _names_topic(value) and not _names_topic(converted):
        raise _lost(
            target,
            path,
            "names its topic in a way the target version cannot (by name where it takes a "
            "topic id, or by id where it takes a name)",
        )
    return converted


def _names_topic(struct: Any) -> bool:
    """Whether ``struct`` names a topic: a non-empty topic name, or a topic id."""
    for f in dataclasses.fields(struct):
        if f.metadata.get("entity_type") == "topicName" and getattr(struct, f.name):
            return True
    return getattr(struct, "topic_id", _NO_TOPIC_ID) not in (_NO_TOPIC_ID, None)


def _lost(target: type[Any], path: str, reason: str) -> VersionConversionError:
    return VersionConversionError(f"{path} {reason} (converting to version {target.__version__})")
