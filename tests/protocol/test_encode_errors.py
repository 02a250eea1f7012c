"""Values that cannot be written raise EncodeError naming the class and field path."""

from __future__ import annotations

import pytest

from kafkawire.errors import EncodeError
from kafkawire.messages.metadata import v0 as metadata_v0
from kafkawire.messages.metadata import v11 as metadata_v11
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.protocol import encode, encode_request


def test_integer_out_of_range() -> None:
    broker = metadata_v12.MetadataResponseBroker(node_id=2**31, host="h", port=1)
    with pytest.raises(EncodeError) as info:
        encode(metadata_v12.MetadataResponse(brokers=(broker,)))
    assert info.value.cls_name == "MetadataResponse"
    assert info.value.path.startswith("brokers[0].node_id")


def test_none_in_a_field_that_is_not_nullable() -> None:
    broker = metadata_v12.MetadataResponseBroker(host=None)  # type: ignore[arg-type]
    with pytest.raises(EncodeError, match="not nullable at this version") as info:
        encode(metadata_v12.MetadataResponse(brokers=(broker,)))
    assert info.value.path == "brokers[0].host"


def test_a_struct_of_another_version_is_refused() -> None:
    wrong = metadata_v11.MetadataResponseBroker(node_id=1, host="h", port=1)
    message = metadata_v12.MetadataResponse(brokers=(wrong,))  # type: ignore[arg-type]
    with pytest.raises(EncodeError, match="expected a MetadataResponseBroker") as info:
        encode(message)
    assert info.value.path == "brokers[0]"


def test_wrong_python_type() -> None:
    with pytest.raises(EncodeError) as info:
        encode(metadata_v0.MetadataRequest(topics=(metadata_v0.MetadataRequestTopic(name=5),)))  # type: ignore[arg-type]
    assert info.value.path == "topics[0].name"


def test_a_string_too_long_for_its_length_prefix() -> None:
    topic = metadata_v0.MetadataRequestTopic(name="x" * 40_000)
    with pytest.raises(EncodeError) as info:
        encode(metadata_v0.MetadataRequest(topics=(topic,)))
    assert info.value.path == "topics[0].name"


def test_encode_request_refuses_a_response() -> None:
    with pytest.raises(EncodeError, match="not a generated request class"):
        encode_request(metadata_v12.MetadataResponse(), correlation_id=1, client_id=None)


def test_an_unknown_tagged_field_may_not_reuse_a_known_tag() -> None:
    from kafkawire.messages.broker_heartbeat.v1 import BrokerHeartbeatRequest

    message = BrokerHeartbeatRequest(unknown_tagged_fields=((0, b"\x80"),))
    with pytest.raises(EncodeError, match="unknown tagged field 0 is a known tag"):
        encode(message)


def test_a_class_without_slots_is_refused_when_its_codec_is_built() -> None:
    import dataclasses

    from kafkawire.protocol import codec_for

    @dataclasses.dataclass(frozen=True)
    class Unslotted:
        __flexible__ = False
        value: int = dataclasses.field(default=0, metadata={"kafka_type": "int32"})

    with pytest.raises(TypeError, match="need @dataclass\\(frozen=True, slots=True\\)"):
        codec_for(Unslotted)
