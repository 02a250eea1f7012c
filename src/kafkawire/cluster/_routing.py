"""What a request names, read from its fields' metadata: where it goes and how long it waits.

Routing is data: the cluster finds the partitions a leader-routed request names, and the group
or transactional id a coordinator-routed one names, from the entity types and wire types the
generated classes carry in their field metadata, not from per-API code.
"""

from __future__ import annotations

import dataclasses
import functools
import uuid
from typing import Any

from kafkawire.errors import KafkawireError, ProtocolError

__all__ = [
    "GROUP",
    "TRANSACTION",
    "InvalidPartitionError",
    "RoutingError",
    "coordinator_key",
    "held_for",
    "partition_answer",
    "partitions_named",
]

GROUP, TRANSACTION = 0, 1  # FindCoordinator key types


class RoutingError(KafkawireError):
    """A request that cannot be sent to one broker as it stands (split it, or name the broker)."""


class InvalidPartitionError(RoutingError):
    """A partition the topic does not have (an index past its last, or negative)."""


_ENTITY_OF_ROUTE = {"group": ("groupId", GROUP), "transaction": ("transactionalId", TRANSACTION)}


def coordinator_key(request: Any) -> tuple[int, str] | None:
    """``(key_type, key)`` of the coordinator a group- or transaction-routed request goes to.

    The key is the one group id (or transactional id) the request names, found by entity type
    in its top-level fields and one level down in its arrays of structs; ``None`` when it names
    none. Several distinct keys cannot go to one coordinator: :class:`RoutingError`.
    """
    entity, key_type = _ENTITY_OF_ROUTE.get(type(request).__route__, ("", -1))
    named: list[str | None] = []
    for f in dataclasses.fields(request):
        value = getattr(request, f.name)
        if f.metadata.get("entity_type") == entity:
            named += [value] if isinstance(value, str | None) else value
        elif f.metadata.get("kafka_type", "").startswith("[]") and value:
            named += [_field_of(v, entity=entity) for v in value]
    keys = {k for k in named if k}
    if len(keys) > 1:
        raise RoutingError(
            f"{type(request).__name__} names {len(keys)} coordinator keys; "
            "send one request per coordinator"
        )
    return (key_type, keys.pop()) if keys else None


# How long a broker may hold a request on purpose before it answers, by field: the fetch wait
# (Fetch, ShareFetch) and the rebalance timeout (JoinGroup).
_HOLDING_FIELDS = ("max_wait_ms", "rebalance_timeout_ms")


def held_for(request: Any) -> float:
    """Seconds the broker may hold ``request`` before answering (0 for most requests)."""
    held = max((getattr(request, name, 0) or 0 for name in _HOLDING_FIELDS), default=0)
    return max(held, 0) / 1000


def partitions_named(request: Any) -> list[tuple[str | uuid.UUID, int]]:
    """The (topic or topic id, partition) pairs a leader-routed request names.

    Found from field metadata, not per-API code: the request's topic array is the array of
    structs whose element has a ``topicName`` field (or a ``topic_id``); in each topic, the
    partitions are the first array field (of ints, or of structs whose first int field is the
    partition index).
    """
    for f in dataclasses.fields(request):
        topics = getattr(request, f.name)
        if not f.metadata.get("kafka_type", "").startswith("[]") or not topics:
            continue
        if not dataclasses.is_dataclass(topics[0]):
            continue
        named = []
        for topic in topics:
            name = _field_of(topic, entity="topicName")
            topic_id = getattr(topic, "topic_id", None)
            key: str | uuid.UUID | None = name or topic_id
            partitions = _first_array(topic)
            if key is None or partitions is None:
                break
            named += [(key, p) for p in partitions]
        else:
            return named
    raise RoutingError(f"{type(request).__name__} names no topic partitions to route by")


def partition_answer(response: Any, topic: str | uuid.UUID, partition: int) -> Any:
    """The part of a response (Produce, Fetch, ListOffsets, ...) that answers ``partition`` of
    ``topic`` (a name, or a topic id), found by the same field metadata as
    :func:`partitions_named`.

    A response that does not answer it (no topics, another topic or partition) is the
    broker breaking the protocol: :class:`ProtocolError` naming what was asked and what came,
    never another partition's data.
    """
    came: list[str] = []
    for answer in _first_array_of_structs(response):  # the topics
        name = _field_of(answer, entity="topicName") or getattr(answer, "topic_id", None)
        partitions = _first_array_of_structs(answer)
        indexes = [_first_int32(p) for p in partitions]
        came += [f"{name}/{i}" for i in indexes]
        if name == topic and partition in indexes:
            return partitions[indexes.index(partition)]
    raise ProtocolError(
        f"the {type(response).__name__} v{response.__version__} does not answer "
        f"{topic}/{partition}: it names {', '.join(came) or 'no partitions'}"
    )


# What the helpers below look up in a generated class's field metadata, once per class: a
# producer asks for its partition's answer in every Produce response.


@functools.cache
def _array_fields(cls: type) -> tuple[str, ...]:
    return tuple(
        f.name for f in dataclasses.fields(cls) if f.metadata.get("kafka_type", "").startswith("[]")
    )


@functools.cache
def _int32_field(cls: type) -> str:
    return next(f.name for f in dataclasses.fields(cls) if f.metadata["kafka_type"] == "int32")


@functools.cache
def _entity_field(cls: type, entity: str) -> str | None:
    return next(
        (f.name for f in dataclasses.fields(cls) if f.metadata.get("entity_type") == entity),
        None,
    )


def _first_array_of_structs(value: Any) -> list[Any]:
    for name in _array_fields(value.__class__):
        items = getattr(value, name)
        if items and _is_struct(items[0]):
            return list(items)
    return []


def _is_struct(value: Any) -> bool:
    return dataclasses.is_dataclass(value)


def _first_int32(value: Any) -> int:
    return int(getattr(value, _int32_field(value.__class__)))


def _field_of(value: Any, *, entity: str) -> Any:
    if not dataclasses.is_dataclass(value):
        return None
    name = _entity_field(value.__class__, entity)
    return None if name is None else getattr(value, name)


def _first_array(topic: Any) -> list[int] | None:
    for name in _array_fields(topic.__class__):
        items = getattr(topic, name) or ()
        if items and dataclasses.is_dataclass(items[0]):
            return [_first_int32(item) for item in items]
        return list(items)
    return None
