"""The consumer protocol's member metadata and assignments: the bytes JoinGroup and SyncGroup
carry for ``protocol_type="consumer"``, as every Kafka client writes them.

Each is an int16 version followed by the ``ConsumerProtocolSubscription`` or
``ConsumerProtocolAssignment`` data message of that version (generated in
:mod:`kafkawire.messages`). Versions only ever add fields at the end, so a newer version is
read as the newest one known and the bytes past it ignored, as Kafka's Java client does.
"""

from __future__ import annotations

import importlib
import struct
from collections.abc import Iterable
from typing import Any

from kafkawire.cluster import TopicPartition
from kafkawire.errors import DecodeError
from kafkawire.messages.consumer_protocol_assignment import v3 as assignment_v3
from kafkawire.messages.consumer_protocol_subscription import v3 as subscription_v3
from kafkawire.protocol import codec_for, encode

from .assignors import Member

__all__ = ["decode_assignment", "decode_subscription", "encode_assignment", "encode_subscription"]

_VERSION = struct.Struct(">h")
_NEWEST = 3
_PACKAGES = {
    "subscription": "kafkawire.messages.consumer_protocol_subscription",
    "assignment": "kafkawire.messages.consumer_protocol_assignment",
}


def _grouped(partitions: Iterable[TopicPartition], cls: type[Any]) -> tuple[Any, ...]:
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return tuple(cls(topic=t, partitions=tuple(ps)) for t, ps in by_topic.items())


def encode_subscription(
    topics: Iterable[str], owned: Iterable[TopicPartition] = (), generation: int = -1
) -> bytes:
    body = subscription_v3.ConsumerProtocolSubscription(
        topics=tuple(sorted(topics)),
        owned_partitions=_grouped(owned, subscription_v3.TopicPartition),
        generation_id=generation,
    )
    return _VERSION.pack(_NEWEST) + encode(body)


def encode_assignment(partitions: Iterable[TopicPartition]) -> bytes:
    body = assignment_v3.ConsumerProtocolAssignment(
        assigned_partitions=_grouped(partitions, assignment_v3.TopicPartition)
    )
    return _VERSION.pack(_NEWEST) + encode(body)


def _decode(kind: str, data: bytes) -> Any:
    if len(data) < _VERSION.size:
        raise DecodeError(f"ConsumerProtocol {kind}", "version", 0, "shorter than its version")
    (version,) = _VERSION.unpack_from(data)
    if version < 0:
        raise DecodeError(f"ConsumerProtocol {kind}", "version", 0, f"version {version}")
    module = importlib.import_module(f"{_PACKAGES[kind]}.v{min(version, _NEWEST)}")
    cls = getattr(module, f"ConsumerProtocol{kind.title()}")
    obj, _ = codec_for(cls).decode_from(bytes(data[_VERSION.size :]), 0)
    return obj


def decode_subscription(data: bytes) -> Member:
    body = _decode("subscription", data)
    owned = tuple(
        TopicPartition(t.topic, p)
        for t in getattr(body, "owned_partitions", ())
        for p in t.partitions
    )
    return Member(tuple(body.topics), owned, getattr(body, "generation_id", -1))


def decode_assignment(data: bytes) -> list[TopicPartition]:
    if not data:  # a member given nothing may get an empty assignment
        return []
    body = _decode("assignment", data)
    return [TopicPartition(t.topic, p) for t in body.assigned_partitions for p in t.partitions]
