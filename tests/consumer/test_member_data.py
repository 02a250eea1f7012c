"""The consumer protocol's bytes: round trips, older and newer versions, kafka-python's, and
the sticky assignor's user data as Kafka's Java client writes it."""

from __future__ import annotations

import struct

import pytest

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.member_data import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from kafkawire.errors import DecodeError
from kafkawire.messages.consumer_protocol_subscription.v0 import ConsumerProtocolSubscription
from kafkawire.messages.consumer_protocol_subscription.v3 import (
    ConsumerProtocolSubscription as ConsumerProtocolSubscriptionV3,
)
from kafkawire.protocol import decode, encode

T = [TopicPartition("t", 0), TopicPartition("t", 2), TopicPartition("u", 1)]


def test_round_trips() -> None:
    member = decode_subscription(encode_subscription(["u", "t"], T[:2], generation=4))
    assert (member.topics, member.owned, member.generation) == (("t", "u"), tuple(T[:2]), 4)
    assert decode_assignment(encode_assignment(T)) == T
    assert decode_assignment(b"") == []


def test_kafka_python_reads_ours_and_we_read_its() -> None:
    kafka_python = pytest.importorskip("kafka.protocol.consumer.metadata")
    subscription = kafka_python.ConsumerProtocolSubscription
    assignment = kafka_python.ConsumerProtocolAssignment
    assert decode_subscription(subscription(0, ["t", "u"], b"").encode()).topics == ("t", "u")
    assert decode_assignment(assignment(0, [("t", [0, 2])], b"").encode()) == T[:2]
    theirs = assignment.decode(encode_assignment(T))
    assert theirs.partitions() == [(tp.topic, tp.partition) for tp in T]
    assert list(subscription.decode(encode_subscription(["t"])).topics) == ["t"]


def test_a_newer_version_reads_as_the_newest_known() -> None:
    data = encode_subscription(["t"])
    newer = b"\x00\x09" + data[2:] + b"future fields"
    assert decode_subscription(newer).topics == ("t",)


def test_garbage_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        decode_subscription(b"\x00")
    with pytest.raises(DecodeError):
        decode_assignment(b"\x00\x00\x00\x00\x00\x09ab")


def _java_sticky_user_data(partitions: dict[str, list[int]], generation: int | None) -> bytes:
    """``StickyAssignorUserData`` as Kafka's Java StickyAssignor writes it: the struct with no
    version before it (version 1 ends with the generation, version 0 has none)."""
    out = struct.pack(">i", len(partitions))
    for topic, ps in partitions.items():
        out += struct.pack(">h", len(topic)) + topic.encode()
        out += struct.pack(f">i{len(ps)}i", len(ps), *ps)
    return out if generation is None else out + struct.pack(">i", generation)


@pytest.mark.parametrize("generation", [7, None])
def test_sticky_reads_what_a_member_had_from_its_user_data(generation: int | None) -> None:
    user_data = _java_sticky_user_data({"t": [0, 2], "u": [1]}, generation)
    data = b"\x00\x00" + encode(ConsumerProtocolSubscription(topics=("t",), user_data=user_data))
    member = decode_subscription(data, "sticky")
    assert (member.owned, member.generation) == (tuple(T), -1 if generation is None else generation)
    assert decode_subscription(data, "range").owned == ()  # only sticky reads it


def test_sticky_writes_its_last_assignment_as_java_does() -> None:
    data = encode_subscription(["t"], generation=7, previous=T)
    body = decode(ConsumerProtocolSubscriptionV3, data[2:])
    assert body.user_data == _java_sticky_user_data({"t": [0, 2], "u": [1]}, 7)
    assert body.owned_partitions == ()  # an eager member owns nothing as it joins
    assert encode_subscription(["t"]) == encode_subscription(["t"], previous=None)


def test_sticky_ignores_user_data_it_cannot_read() -> None:
    """kafka-python 3.0 writes the user data with an int16 version before it, which Kafka's
    Java client does not write and cannot read: the previous assignment is ignored, as there."""
    kafka_python = pytest.importorskip("kafka.coordinator.assignors.sticky.sticky_assignor")
    from kafka.structs import TopicPartition as TheirTopicPartition

    owned = [TheirTopicPartition("t", 2)]
    theirs = kafka_python.StickyPartitionAssignor._metadata(["t"], owned, 7).encode()
    assert b"\x00\x01\x00\x00\x00\x01\x00\x01t" in theirs  # version 1, then one topic: t
    assert decode_subscription(theirs, "sticky") == decode_subscription(theirs)
    garbage = b"\x00\x00" + encode(ConsumerProtocolSubscription(topics=("t",), user_data=b"\x01"))
    assert decode_subscription(garbage, "sticky").owned == ()
