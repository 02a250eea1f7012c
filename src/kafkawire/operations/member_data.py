"""The consumer protocol's member data: the subscription a member sends in JoinGroup and the
assignment it gets in SyncGroup (``protocol_type="consumer"``), as every Kafka client writes
them. The consumer's classic member writes and reads them; the admin client reads them to
describe a group's members.

Each is an int16 version followed by the ``ConsumerProtocolSubscription`` or
``ConsumerProtocolAssignment`` data message of that version (generated in
:mod:`kafkawire.messages`). kafkawire writes the newest version it knows. Versions only ever
add fields at the end, so a newer version is read as the newest one known and the bytes past
it ignored, as Kafka's Java client does.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafkawire.cluster import TopicPartition
from kafkawire.errors import DecodeError
from kafkawire.messages.consumer_protocol_assignment import v0 as assignment_v0
from kafkawire.messages.consumer_protocol_assignment import v1 as assignment_v1
from kafkawire.messages.consumer_protocol_assignment import v2 as assignment_v2
from kafkawire.messages.consumer_protocol_assignment import v3 as assignment_v3
from kafkawire.messages.consumer_protocol_subscription import v0 as subscription_v0
from kafkawire.messages.consumer_protocol_subscription import v1 as subscription_v1
from kafkawire.messages.consumer_protocol_subscription import v2 as subscription_v2
from kafkawire.messages.consumer_protocol_subscription import v3 as subscription_v3
from kafkawire.protocol import codec_for, encode

from .fanout import by_topic

__all__ = [
    "Subscription",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
]

_VERSION = struct.Struct(">h")
_SUBSCRIPTIONS: tuple[type[Any], ...] = (
    subscription_v0.ConsumerProtocolSubscription,
    subscription_v1.ConsumerProtocolSubscription,
    subscription_v2.ConsumerProtocolSubscription,
    subscription_v3.ConsumerProtocolSubscription,
)
_ASSIGNMENTS: tuple[type[Any], ...] = (
    assignment_v0.ConsumerProtocolAssignment,
    assignment_v1.ConsumerProtocolAssignment,
    assignment_v2.ConsumerProtocolAssignment,
    assignment_v3.ConsumerProtocolAssignment,
)


@dataclass(frozen=True, slots=True)
class Subscription:
    """What a member subscribes to, and (cooperative members, who keep their partitions while
    they rejoin) what it owns since which generation; ``user_data`` is its assignor's."""

    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...] = ()
    generation: int = -1
    user_data: bytes | None = None


def encode_subscription(subscription: Subscription) -> bytes:
    """``subscription`` at the newest version, topics sorted."""
    body = subscription_v3.ConsumerProtocolSubscription(
        topics=tuple(sorted(subscription.topics)),
        user_data=subscription.user_data,
        owned_partitions=_grouped(subscription.owned, subscription_v3.TopicPartition),
        generation_id=subscription.generation,
    )
    return _VERSION.pack(body.__version__) + encode(body)


def decode_subscription(data: bytes) -> Subscription:
    """A subscription of any version (fields an old version lacks take their defaults)."""
    body = _decode(_SUBSCRIPTIONS, data)
    owned = tuple(
        TopicPartition(t.topic, p)
        for t in getattr(body, "owned_partitions", ())
        for p in t.partitions
    )
    return Subscription(
        tuple(body.topics), owned, getattr(body, "generation_id", -1), body.user_data
    )


def encode_assignment(partitions: Iterable[TopicPartition]) -> bytes:
    """An assignment of ``partitions`` at the newest version."""
    body = assignment_v3.ConsumerProtocolAssignment(
        assigned_partitions=_grouped(partitions, assignment_v3.TopicPartition)
    )
    return _VERSION.pack(body.__version__) + encode(body)


def decode_assignment(data: bytes) -> list[TopicPartition]:
    """The partitions an assignment of any version gives (empty bytes: none, as a member
    given nothing may get)."""
    if not data:
        return []
    body = _decode(_ASSIGNMENTS, data)
    return [TopicPartition(t.topic, p) for t in body.assigned_partitions for p in t.partitions]


def _grouped(partitions: Iterable[TopicPartition], cls: type[Any]) -> tuple[Any, ...]:
    return tuple(
        cls(topic=topic, partitions=tuple(ps)) for topic, ps in by_topic(sorted(partitions)).items()
    )


def _decode(versions: tuple[type[Any], ...], data: bytes) -> Any:
    """A data message: its int16 version, then that version's body (a newer version than
    kafkawire knows is read as the newest known, its extra bytes ignored)."""
    name = versions[-1].__name__
    if len(data) < _VERSION.size:
        raise DecodeError(name, "version", 0, "input ends inside the field")
    (version,) = _VERSION.unpack_from(data)
    if version < 0:
        raise DecodeError(name, "version", 0, f"negative version {version}")
    cls = versions[min(version, len(versions) - 1)]
    return codec_for(cls).decode_from(bytes(data), _VERSION.size)[0]
