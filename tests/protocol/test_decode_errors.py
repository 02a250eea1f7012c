"""Bad input raises DecodeError naming the class, field path and offset; nothing else escapes."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.errors import DecodeError, UnknownMessageError
from kafkawire.messages import request_type, response_type
from kafkawire.messages.api_versions import v0 as api_versions_v0
from kafkawire.messages.api_versions import v3 as api_versions_v3
from kafkawire.messages.fetch import v16 as fetch_v16
from kafkawire.messages.metadata import v1 as metadata_v1
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.messages.testdata.simple_example_message import v1 as example_v1
from kafkawire.protocol import decode, decode_request, encode
from tests.budgets import examples


def _metadata_v12() -> metadata_v12.MetadataResponse:
    partition = metadata_v12.MetadataResponsePartition(
        partition_index=0, leader_id=1, replica_nodes=(1, 2), isr_nodes=(1,)
    )
    topic = metadata_v12.MetadataResponseTopic(
        name="orders", topic_id=uuid.UUID(int=7), partitions=(partition, partition)
    )
    broker = metadata_v12.MetadataResponseBroker(node_id=1, host="b1", port=9092, rack="r")
    return metadata_v12.MetadataResponse(
        brokers=(broker,), cluster_id="c", topics=(topic,), unknown_tagged_fields=((9, b"z"),)
    )


SAMPLES: list[Any] = [
    _metadata_v12(),
    metadata_v1.MetadataResponse(
        brokers=(metadata_v1.MetadataResponseBroker(node_id=1, host="h", port=1, rack=None),),
        topics=(metadata_v1.MetadataResponseTopic(name="t"),),
    ),
    api_versions_v0.ApiVersionsResponse(
        api_keys=(api_versions_v0.ApiVersion(api_key=0, min_version=0, max_version=9),)
    ),
    example_v1.SimpleExampleMessage(
        process_id=uuid.UUID(int=1), my_tagged_int_array=(1, 2), my_nullable_string="n", my_int16=7
    ),
]


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_truncation_at_every_byte_is_a_decode_error(message: Any) -> None:
    data = encode(message)
    cls = type(message)
    for cut in range(len(data)):
        with pytest.raises(DecodeError) as info:
            decode(cls, data[:cut])
        assert info.value.cls_name == cls.__name__
        assert 0 <= info.value.offset <= cut


def test_error_names_the_nested_field_path_and_offset() -> None:
    data = bytearray(encode(_metadata_v12()))
    # The second partition's replica_nodes count: make it claim 100 elements.
    partition = encode(_metadata_v12().topics[0].partitions[1])
    start = bytes(data).rindex(partition)
    data[start + 14] = 101  # compact count of 100, after the 14 bytes of fixed fields
    with pytest.raises(DecodeError) as info:
        decode(metadata_v12.MetadataResponse, data)
    error = info.value
    assert error.cls_name == "MetadataResponse"
    assert error.path == "topics[0].partitions[1].replica_nodes"
    assert error.offset == start + 15
    assert "array of 100 elements runs past the end" in str(error)


def test_trailing_bytes_are_an_error() -> None:
    data = encode(_metadata_v12()) + b"\x00"
    with pytest.raises(DecodeError, match="1 trailing bytes"):
        decode(metadata_v12.MetadataResponse, data)


def test_null_in_a_non_nullable_string() -> None:
    # MetadataResponse v1 broker: node_id, host (STRING, not nullable) = -1
    data = b"\x00\x00\x00\x01" + b"\x00\x00\x00\x01" + b"\xff\xff"
    with pytest.raises(DecodeError, match="null string") as info:
        decode(metadata_v1.MetadataResponse, data)
    assert info.value.path == "brokers[0].host"


def test_negative_count_for_a_non_nullable_array() -> None:
    with pytest.raises(DecodeError, match="null array") as info:
        decode(api_versions_v0.ApiVersionsResponse, b"\x00\x00\xff\xff\xff\xfe")
    assert info.value.path == "api_keys"


def test_huge_lengths_fail_before_allocating() -> None:
    # A count of 2**31 - 1 elements in a six-byte message.
    with pytest.raises(DecodeError, match="runs past the end"):
        decode(api_versions_v0.ApiVersionsResponse, b"\x00\x00\x7f\xff\xff\xff")
    # A compact count of 2**32 - 2 in a flexible message.
    with pytest.raises(DecodeError, match="runs past the end"):
        decode(metadata_v12.MetadataResponse, b"\x00\x00\x00\x00\xff\xff\xff\xff\x0f")
    # A string of 32767 bytes with 3 left.
    data = b"\x00\x00\x00\x01" + b"\x00\x00\x00\x01" + b"\x7f\xff" + b"abc"
    with pytest.raises(DecodeError, match="string of 32767 bytes runs past the end"):
        decode(metadata_v1.MetadataResponse, data)


def test_invalid_utf8() -> None:
    data = b"\x00\x00\x00\x01" + b"\x00\x00\x00\x01" + b"\x00\x02\xc3\x28"
    with pytest.raises(DecodeError, match="utf-8") as info:
        decode(metadata_v1.MetadataResponse, data)
    assert info.value.path == "brokers[0].host"
    assert info.value.offset == 10  # the string's bytes, after its length prefix


def test_varint_longer_than_five_bytes() -> None:
    data = b"\x00\x00\x00\x00" + b"\xff\xff\xff\xff\xff\x01"
    with pytest.raises(DecodeError, match="varint longer than 5 bytes"):
        decode(metadata_v12.MetadataResponse, data)


def test_tagged_field_past_the_end_and_with_leftover_bytes() -> None:
    body = b"\x00\x00" + b"\x01" + b"\x00\x00\x00\x00"
    with pytest.raises(DecodeError, match="tagged field of 9 bytes runs past the end"):
        decode(api_versions_v3.ApiVersionsResponse, body + b"\x01\x01\x09" + b"\x00" * 8)
    with pytest.raises(DecodeError, match="1 bytes left over") as info:
        decode(api_versions_v3.ApiVersionsResponse, body + b"\x01\x01\x09" + b"\x00" * 9)
    assert info.value.path == "finalized_features_epoch"


def test_unknown_api_key_and_version() -> None:
    with pytest.raises(UnknownMessageError, match="no Kafka API with key 999"):
        request_type(999, 0)
    with pytest.raises(UnknownMessageError, match=r"Metadata \(API key 3\) has no version 99"):
        response_type(3, 99)
    frame = b"\x03\xe7\x00\x00" + b"\x00\x00\x00\x01" + b"\xff\xff"
    with pytest.raises(DecodeError, match="no Kafka API with key 999") as info:
        decode_request(frame)
    assert info.value.path == "request_api_key"
    with pytest.raises(DecodeError, match="input ends"):
        decode_request(b"\x00")


FUZZED = [
    metadata_v12.MetadataResponse,
    metadata_v1.MetadataResponse,
    fetch_v16.FetchResponse,
    api_versions_v0.ApiVersionsResponse,
    example_v1.SimpleExampleMessage,
]


# Fuzzing gets a larger budget than the round trips: these are few, and they guard the network edge.
FUZZ = settings(max_examples=examples(400))


@pytest.mark.parametrize("cls", FUZZED, ids=lambda c: f"{c.__module__}.{c.__name__}")
@FUZZ
@given(data=st.binary(max_size=200))
def test_fuzzed_bytes_only_raise_decode_error(cls: type[Any], data: bytes) -> None:
    try:
        decoded = decode(cls, data)
    except DecodeError:
        return
    assert isinstance(decoded, cls)


@FUZZ
@given(message=st.sampled_from(SAMPLES), data=st.data())
def test_mutated_messages_only_raise_decode_error(message: Any, data: st.DataObject) -> None:
    raw = bytearray(encode(message))
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    with contextlib.suppress(DecodeError):
        decode(type(message), raw)


@FUZZ
@given(data=st.binary(max_size=120))
def test_fuzzed_request_frames_only_raise_decode_error(data: bytes) -> None:
    with contextlib.suppress(DecodeError):
        decode_request(data)
