"""Values that cannot be written raise EncodeError naming the class and field path."""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.errors import EncodeError
from kafkawire.messages.metadata import v0 as metadata_v0
from kafkawire.messages.metadata import v11 as metadata_v11
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.messages.produce import v11 as produce_v11
from kafkawire.protocol import encode, encode_request
from kafkawire.protocol.primitives import FIXED_FORMATS, INTEGER_RANGES
from kafkawire.testing.strategies import messages
from tests.budgets import examples

from .catalog import all_classes


def test_integer_out_of_range() -> None:
    broker = metadata_v12.MetadataResponseBroker(node_id=2**31, host="h", port=1)
    with pytest.raises(EncodeError) as info:
        encode(metadata_v12.MetadataResponse(brokers=(broker,)))
    assert info.value.cls_name == "MetadataResponse"
    assert info.value.path == "brokers[0].node_id"
    assert info.value.reason == "2147483648 is out of range for int32 (-2147483648..2147483647)"


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


def test_a_value_packed_with_its_neighbours_is_named_alone_with_its_range() -> None:
    # acks and timeout_ms are written by one struct.Struct; the error names acks alone.
    with pytest.raises(EncodeError) as info:
        encode(produce_v11.ProduceRequest(acks=70_000))
    assert str(info.value) == (
        "ProduceRequest.acks at byte 1: 70000 is out of range for int16 (-32768..32767)"
    )
    with pytest.raises(EncodeError) as info:
        encode(produce_v11.ProduceRequest(timeout_ms="5"))  # type: ignore[arg-type]
    assert (
        str(info.value)
        == "ProduceRequest.timeout_ms at byte 3: '5' is not an integer, as int32 needs"
    )


def _integer_fields(cls: type[Any]) -> list[tuple[str, str, bool]]:
    """(name, Kafka type, is array) of the top-level fixed-width integer fields of ``cls``."""
    found = []
    for f in dataclasses.fields(cls):
        kafka_type = f.metadata["kafka_type"]
        element = kafka_type.removeprefix("[]")
        if element in FIXED_FORMATS and element in INTEGER_RANGES:
            found.append((f.name, element, kafka_type.startswith("[]")))
    return found


@cache
def _with_integers() -> list[type[Any]]:
    """The classes with such fields (imports every class: on first use, not at collection)."""
    return [cls for cls in all_classes() if _integer_fields(cls)]


@settings(max_examples=examples(300))
@given(st.data())
def test_an_integer_out_of_range_is_named_with_its_range_in_words(data: st.DataObject) -> None:
    cls = data.draw(st.sampled_from(_with_integers()), label="class")
    message = data.draw(messages(cls), label="message")
    name, kafka_type, is_array = data.draw(st.sampled_from(_integer_fields(cls)), label="field")
    low, high = INTEGER_RANGES[kafka_type]
    bad = data.draw(st.integers(max_value=low - 1) | st.integers(min_value=high + 1), label="bad")
    if is_array:
        items = list(getattr(message, name) or ())
        index = data.draw(st.integers(0, len(items)), label="index")
        items.insert(index, bad)
        value: Any = tuple(items)
        path = f"{name}[{index}]"
    else:
        value, path = bad, name
    with pytest.raises(EncodeError) as info:
        encode(dataclasses.replace(message, **{name: value}))
    assert (info.value.cls_name, info.value.path) == (cls.__name__, path)
    assert info.value.reason == f"{bad} is out of range for {kafka_type} ({low}..{high})"
