"""The consumer protocol's bytes: round trips, older and newer versions, kafka-python's."""

from __future__ import annotations

import pytest

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.member_data import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from kafkawire.errors import DecodeError

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
