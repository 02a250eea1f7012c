"""The consumer's side of the consumer protocol's member data: the ``sticky`` assignor's
user data in a subscription, and subscriptions read as the leader's assignors take them.

The bytes themselves (``ConsumerProtocolSubscription`` and ``ConsumerProtocolAssignment``)
are :mod:`kafkawire.operations.member_data`'s, shared with the admin client.

The eager ``sticky`` assignor learns what members own from their subscription's user data
(``StickyAssignorUserData``): eager members give everything up before they join, so their
subscriptions own nothing. Kafka's Java client and kafka-python write and read it there, and
so does kafkawire. Kafka defines that message in its client's resources, which are not among
the schemas kafkawire generates from, so its two versions are written out here, in the
generated classes' form.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from kafkawire.cluster import TopicPartition
from kafkawire.errors import DecodeError
from kafkawire.operations import member_data
from kafkawire.operations.fanout import by_topic
from kafkawire.operations.member_data import decode_assignment, encode_assignment
from kafkawire.protocol import codec_for, encode

from .assignors import Member

__all__ = ["decode_assignment", "decode_subscription", "encode_assignment", "encode_subscription"]

STICKY = "sticky"


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
                previous_assignment=tuple(
                    _StickyTopicPartitions(topic=topic, partitions=tuple(ps))
                    for topic, ps in by_topic(sorted(previous)).items()
                ),
                generation=generation,
            )
        )
    subscription = member_data.Subscription(tuple(topics), tuple(owned), generation, user_data)
    return member_data.encode_subscription(subscription)


def decode_subscription(data: bytes, protocol: str = "") -> Member:
    """A member's subscription, as the leader reads it to run assignor ``protocol``: for
    ``sticky``, what the member owns comes from its user data where it has some."""
    body = member_data.decode_subscription(data)
    if protocol == STICKY and body.user_data:
        previous = _sticky_user_data(body.user_data)
        if previous is not None:
            return Member(body.topics, *previous)
    return Member(body.topics, body.owned, body.generation)


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
