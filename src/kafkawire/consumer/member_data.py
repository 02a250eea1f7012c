"""The consumer protocol's member metadata and assignments: the bytes JoinGroup and SyncGroup
carry for ``protocol_type="consumer"``, as every Kafka client writes them.

Each is an int16 version followed by the ``ConsumerProtocolSubscription`` or
``ConsumerProtocolAssignment`` data message of that version (generated in
:mod:`kafkawire.messages`). Versions only ever add fields at the end, so a newer version is
read as the newest one known and the bytes past it ignored, as Kafka's Java client does.

The eager ``sticky`` assignor learns what members own from their subscription's user data
(``StickyAssignorUserData``): eager members give everything up before they join, so their
subscriptions own nothing. Kafka's Java client and kafka-python write and read it there, and
so does kafkawire. Kafka defines that message in its client's resources, which are not among
the schemas kafkawire generates from, so its two versions are written out here, in the
generated classes' form.
"""

from __future__ import annotations

import importlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kafkawire.cluster import TopicPartition
from kafkawire.errors import DecodeError
from kafkawire.messages.consumer_protocol_assignment import v3 as assignment_v3
from kafkawire.messages.consumer_protocol_subscription import v3 as subscription_v3
from kafkawire.protocol import codec_for, encode

from .assignors import Member

__all__ = ["decode_assignment", "decode_subscription", "encode_assignment", "encode_subscription"]

STICKY = "sticky"

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


@dataclass(frozen=True, slots=True, kw_only=True)
class _StickyTopicPartitions:
    __version__: ClassVar[int] = 0
    __flexible__: ClassVar[bool] = False

    topic: str = field(default="", metadata={"kafka_type": "string"})
    partitions: tuple[int, ...] = field(default=(), metadata={"kafka_type": "[]int32"})


@dataclass(frozen=True, slots=True, kw_only=True)
class _StickyUserDataV0:
    """``StickyAssignorUserData`` version 0: what the member owned."""

    __kind__: ClassVar[str] = "data"
    __version__: ClassVar[int] = 0
    __flexible__: ClassVar[bool] = False

    previous_assignment: tuple[_StickyTopicPartitions, ...] = field(
        default=(), metadata={"kafka_type": "[]_StickyTopicPartitions"}
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _StickyUserDataV1:
    """``StickyAssignorUserData`` version 1 (what Kafka's clients write): and in which
    generation."""

    __kind__: ClassVar[str] = "data"
    __version__: ClassVar[int] = 1
    __flexible__: ClassVar[bool] = False

    previous_assignment: tuple[_StickyTopicPartitions, ...] = field(
        default=(), metadata={"kafka_type": "[]_StickyTopicPartitions"}
    )
    generation: int = field(default=-1, metadata={"kafka_type": "int32"})


def encode_subscription(
    topics: Iterable[str],
    owned: Iterable[TopicPartition] = (),
    generation: int = -1,
    *,
    previous: Iterable[TopicPartition] | None = None,
) -> bytes:
    """A subscription to ``topics`` by a member that owns ``owned`` (cooperative members
    still own their partitions when they join) since ``generation``; ``previous`` is what the
    member had before it gave everything up, for the ``sticky`` assignor's user data (None:
    no user data)."""
    user_data = None
    if previous is not None:
        user_data = encode(
            _StickyUserDataV1(
                previous_assignment=_grouped(previous, _StickyTopicPartitions),
                generation=generation,
            )
        )
    body = subscription_v3.ConsumerProtocolSubscription(
        topics=tuple(sorted(topics)),
        user_data=user_data,
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


def decode_subscription(data: bytes, protocol: str = "") -> Member:
    """A member's subscription, as the leader reads it to run assignor ``protocol``: for
    ``sticky``, what the member owns comes from its user data where it has some."""
    body = _decode("subscription", data)
    topics = tuple(body.topics)
    if protocol == STICKY and body.user_data:
        previous = _sticky_user_data(body.user_data)
        if previous is not None:
            return Member(topics, *previous)
    owned = tuple(
        TopicPartition(t.topic, p)
        for t in getattr(body, "owned_partitions", ())
        for p in t.partitions
    )
    return Member(topics, owned, getattr(body, "generation_id", -1))


def _sticky_user_data(data: bytes) -> tuple[tuple[TopicPartition, ...], int] | None:
    """The partitions and generation in ``StickyAssignorUserData``, trying the newest version
    first as Kafka's Java client does; ``None`` if no version reads (the member's previous
    assignment is then ignored, as there)."""
    for cls in (_StickyUserDataV1, _StickyUserDataV0):
        try:
            body, _ = codec_for(cls).decode_from(data, 0)
        except DecodeError:
            continue
        owned = tuple(
            TopicPartition(t.topic, p) for t in body.previous_assignment for p in t.partitions
        )
        return owned, getattr(body, "generation", -1)
    return None


def decode_assignment(data: bytes) -> list[TopicPartition]:
    if not data:  # a member given nothing may get an empty assignment
        return []
    body = _decode("assignment", data)
    return [TopicPartition(t.topic, p) for t in body.assigned_partitions for p in t.partitions]
