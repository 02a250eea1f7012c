"""Byte-exact frames, written out field by field from the layouts in Kafka's protocol guide.

Each expected byte string is built here by hand, one field a line, so a reader can check it
against the guide without trusting the serializer.
"""

from __future__ import annotations

import pytest

from kafkawire.messages.api_versions import v3 as api_versions_v3
from kafkawire.messages.metadata import v0 as metadata_v0
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.messages.testdata.nullable_struct_message import v1 as nullable_v1
from kafkawire.protocol import (
    decode,
    decode_request,
    decode_response,
    encode,
    encode_request,
    encode_response,
)

pytestmark = pytest.mark.golden


def h(text: str) -> bytes:
    return bytes.fromhex(text)


def test_metadata_v0_request_frame() -> None:
    # The frame from the issue: api key 3, version 0, correlation id 1, client id "test".
    expected = h("00 00 00 12 00 03 00 00 00 00 00 01 00 04 74 65 73 74 00 00 00 00")
    request = metadata_v0.MetadataRequest(topics=())
    assert encode_request(request, correlation_id=1, client_id="test") == expected
    header, body = decode_request(expected[4:])
    assert (header.request_api_key, header.request_api_version, header.correlation_id) == (3, 0, 1)
    assert header.client_id == "test"
    assert body == request


def test_api_versions_v3_request_frame_uses_header_v2_with_a_classic_client_id() -> None:
    body = (
        h("0a")
        + b"kafkawire"  # client_software_name: COMPACT_STRING, length 9 + 1
        + h("06")
        + b"0.1.0"  # client_software_version: COMPACT_STRING, length 5 + 1
        + h("00")  # no tagged fields
    )
    header = (
        h("00 12")  # request_api_key 18
        + h("00 03")  # request_api_version 3
        + h("00 00 00 07")  # correlation_id 7
        + h("00 04")
        + b"test"  # client_id: a NULLABLE_STRING even in header v2
        + h("00")  # header tagged fields
    )
    expected = len(header + body).to_bytes(4, "big") + header + body
    request = api_versions_v3.ApiVersionsRequest(
        client_software_name="kafkawire", client_software_version="0.1.0"
    )
    assert encode_request(request, correlation_id=7, client_id="test") == expected


def test_api_versions_v0_response() -> None:
    payload = (
        h("00 00 00 07")  # response header v0: correlation_id
        + h("00 00")  # error_code
        + h("00 00 00 02")  # api_keys: ARRAY of 2
        + h("00 00 00 00 00 09")  # Produce 0-9
        + h("00 03 00 00 00 0c")  # Metadata 0-12
    )
    header, response = decode_response(payload, 18, 0)
    assert header.correlation_id == 7
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [
        (0, 0, 9),
        (3, 0, 12),
    ]
    assert encode_response(response, correlation_id=7) == len(payload).to_bytes(4, "big") + payload


def test_api_versions_v3_response_keeps_header_v0_and_writes_tagged_fields() -> None:
    payload = (
        h("00 00 00 07")  # response header v0 (ApiVersions never uses v1): no tag byte
        + h("00 00")  # error_code
        + h("02")  # api_keys: COMPACT_ARRAY of 1
        + h("00 12 00 00 00 04 00")  # ApiVersions 0-4, no tags
        + h("00 00 00 00")  # throttle_time_ms
        + h("01")  # one tagged field
        + h("01 08 00 00 00 00 00 00 00 2a")  # tag 1 finalized_features_epoch, 8 bytes: 42
    )
    header, response = decode_response(payload, 18, 3)
    assert header.correlation_id == 7
    assert response.finalized_features_epoch == 42
    assert response.api_keys == (
        api_versions_v3.ApiVersion(api_key=18, min_version=0, max_version=4),
    )
    # A tagged field at its default (-1) is not written at all.
    plain = api_versions_v3.ApiVersionsResponse()
    assert encode(plain) == h("00 00  01  00 00 00 00  00")


def test_metadata_v12_compact_and_nullable_fields() -> None:
    broker = metadata_v12.MetadataResponseBroker(node_id=1, host="b", port=9092, rack=None)
    response = metadata_v12.MetadataResponse(brokers=(broker,), cluster_id=None, controller_id=1)
    expected = (
        h("00 00 00 00")  # throttle_time_ms
        + h("02")  # brokers: COMPACT_ARRAY of 1
        + h("00 00 00 01")  # node_id
        + h("02")
        + b"b"  # host: COMPACT_STRING "b"
        + h("00 00 23 84")  # port 9092
        + h("00")  # rack: COMPACT_NULLABLE_STRING null
        + h("00")  # broker tagged fields
        + h("00")  # cluster_id: null
        + h("00 00 00 01")  # controller_id
        + h("01")  # topics: COMPACT_ARRAY of 0
        + h("00")  # tagged fields
    )
    assert encode(response) == expected
    assert decode(metadata_v12.MetadataResponse, expected) == response


def test_nullable_struct_marker_and_tagged_struct() -> None:
    struct3 = nullable_v1.MyStruct3(my_string="x", my_int=5)
    message = nullable_v1.NullableStructMessage(
        nullable_struct=None,
        nullable_struct2=nullable_v1.MyStruct2(my_string="", my_int=2),
        nullable_struct3=struct3,
    )
    expected = (
        h("ff")  # nullable_struct: marker -1, null
        + h("01")
        + h("01")
        + h("00 00 00 02")
        + h("00")  # nullable_struct2: present, "", 2, tags
        + h("01")  # one tagged field
        + h("00 08")  # tag 0 (nullable_struct3), 8 bytes:
        + h("01")
        + h("02")
        + b"x"
        + h("00 00 00 05")
        + h("00")  # marker 1, "x", 5, no tags
    )
    assert encode(message) == expected
    assert decode(nullable_v1.NullableStructMessage, expected) == message
