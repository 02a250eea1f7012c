"""Every generated class survives object -> bytes -> object and bytes -> object -> bytes.

One property per group of classes (an API's requests or responses at every version, or another
package's classes: ``catalog.groups``), whose examples draw a message of every class of the
group: each class gets the property's budget of examples in every run, and each example is
decoded by each decoder the build has.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.errors import EncodeError
from kafkawire.messages import APIS, RequestMessage, ResponseMessage, request_type, response_type
from kafkawire.protocol import decode, encode
from kafkawire.testing.strategies import messages
from tests.budgets import examples

from .catalog import api_classes, class_id, group_classes, groups, other_classes
from .decoders import DECODE_PATHS, decoding_with

pytestmark = pytest.mark.roundtrip


def test_every_api_and_version_is_generated() -> None:
    # Every request API of Kafka 4.3.0 (keys 0-92, 93 of them), at every version any of the
    # three schema inputs declares.
    assert sorted(APIS) == list(range(93))
    assert sum(len(info.versions) for info in APIS.values()) == 361
    assert len(api_classes()) == 2 * 361


def test_kafka_4_3_layouts_win_where_the_2024_snapshot_differs() -> None:
    # ReadShareGroupStateSummaryResponse v0 as released (LeaderEpoch added after the 2024
    # snapshot marked v0 unstable), and VoteRequest's renamed fields (same layout).
    from kafkawire.messages.read_share_group_state_summary.v0 import PartitionResult
    from kafkawire.messages.vote.v0 import VoteRequestPartitionData

    names = [f.name for f in dataclasses.fields(PartitionResult)]
    assert names[:5] == ["partition", "error_code", "error_message", "state_epoch", "leader_epoch"]
    names = [f.name for f in dataclasses.fields(VoteRequestPartitionData)]
    assert names[:3] == ["partition_index", "replica_epoch", "replica_id"]


def test_headers_data_and_test_messages_are_generated() -> None:
    names = {cls.__name__ for cls in other_classes()}
    assert {"RequestHeader", "ResponseHeader"} <= names
    assert {"ConsumerProtocolSubscription", "ConsumerProtocolAssignment"} <= names
    assert {"DefaultPrincipalData", "SimpleExampleMessage", "NullableStructMessage"} <= names
    assert {"SimpleArraysMessage", "SimpleRecordsMessage"} <= names


@pytest.mark.parametrize("group", groups())
@settings(max_examples=examples(6))  # per class: each example draws every class of the group
@given(data=st.data())
def test_round_trip(group: str, data: st.DataObject) -> None:
    for cls in group_classes(group):
        message = data.draw(messages(cls), label=class_id(cls))
        encoded = encode(message)
        for path in DECODE_PATHS:
            with decoding_with(path):
                decoded = decode(cls, encoded)
            assert decoded == message, f"{class_id(cls)}, {path} decoder"
            assert encode(decoded) == encoded, f"{class_id(cls)}, {path} decoder"


@given(st.data())
def test_unknown_tagged_fields_are_kept_byte_for_byte(data: st.DataObject) -> None:
    from kafkawire.messages.metadata.v12 import MetadataResponse, MetadataResponseBroker

    tags = data.draw(
        st.lists(st.tuples(st.integers(0, 2**31 - 1), st.binary(max_size=300)), min_size=1).map(
            lambda items: tuple(sorted(dict(items).items()))
        )
    )
    broker = MetadataResponseBroker(node_id=1, host="h", port=1, unknown_tagged_fields=tags)
    encoded = encode(MetadataResponse(brokers=(broker,), unknown_tagged_fields=tags))
    for path in DECODE_PATHS:
        with decoding_with(path):
            decoded = decode(MetadataResponse, encoded)
        assert decoded.unknown_tagged_fields == tags, path
        assert decoded.brokers[0].unknown_tagged_fields == tags, path


def test_unknown_tagged_fields_out_of_order_are_refused() -> None:
    # Kafka's writer (RawTaggedFieldWriter) refuses raw tags that are not in ascending order;
    # sorting them instead would decode to a message unequal to the one given.
    from kafkawire.messages.metadata.v12 import MetadataResponse

    for tags, after in [
        (((7, b"a"), (5, b"b")), "5 comes after tag 7"),
        (((5, b""),) * 2, "5 comes after tag 5"),
    ]:
        with pytest.raises(EncodeError, match=f"unknown tagged field {after}") as info:
            encode(MetadataResponse(unknown_tagged_fields=tags))
        assert info.value.path == "unknown_tagged_fields"


@pytest.mark.parametrize("path", DECODE_PATHS)
def test_unknown_tags_out_of_order_on_the_wire_are_kept_as_read(path: str) -> None:
    # Kafka's reader keeps unknown tags in wire order, and its writer then refuses them.
    from kafkawire.messages.metadata.v12 import MetadataResponse

    data = encode(MetadataResponse(unknown_tagged_fields=((5, b"b"), (7, b"a"))))
    assert data.endswith(bytes.fromhex("02 05 01 62 07 01 61"))
    swapped = data[:-7] + bytes.fromhex("02 07 01 61 05 01 62")
    with decoding_with(path):
        decoded = decode(MetadataResponse, swapped)
    assert decoded.unknown_tagged_fields == ((7, b"a"), (5, b"b"))
    with pytest.raises(EncodeError, match="5 comes after tag 7"):
        encode(decoded)


def test_class_level_facts() -> None:
    from kafkawire.messages.join_group.v9 import JoinGroupRequest, JoinGroupResponse
    from kafkawire.messages.request_header.v2 import RequestHeader

    assert (JoinGroupRequest.__kind__, JoinGroupResponse.__kind__) == ("request", "response")
    assert (JoinGroupRequest.__api_key__, JoinGroupRequest.__version__) == (11, 9)
    assert (JoinGroupRequest.__header_version__, JoinGroupResponse.__header_version__) == (2, 1)
    assert JoinGroupRequest.__route__ == "group"
    assert RequestHeader.__kind__ == "header"
    routes = {cls.__route__ for cls in api_classes() if cls.__kind__ == "request"}
    assert routes == {"any", "leader", "group", "transaction", "every", "internal"}


def test_every_request_class_names_its_response_class() -> None:
    for api_key, info in APIS.items():
        for version in info.versions:
            request, response = request_type(api_key, version), response_type(api_key, version)
            assert request.__response__ is response
            assert issubclass(request, RequestMessage)
            assert issubclass(response, ResponseMessage)
            assert not issubclass(response, RequestMessage)
    # Only API messages have the bases: not headers, data messages or nested structs.
    assert not any(issubclass(c, RequestMessage | ResponseMessage) for c in other_classes())
    from kafkawire.messages.metadata.v12 import MetadataRequest, MetadataRequestTopic

    assert isinstance(MetadataRequest(), RequestMessage)
    assert not isinstance(MetadataRequestTopic(), RequestMessage | ResponseMessage)


def test_the_bases_add_no_state() -> None:
    # Still frozen and slotted: no __dict__ or __weakref__ from a base.
    from kafkawire.messages.metadata.v12 import MetadataRequest

    request = MetadataRequest()
    assert RequestMessage.__slots__ == ResponseMessage.__slots__ == ()
    assert not hasattr(request, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.topics = None  # type: ignore[misc]


# Where Kafka 4.3's newer APIs go, as Kafka's Java clients and brokers send them.
KAFKA_4_3_ROUTES = {
    "group": (69, 76, 77, 88, 89, 90, 91, 92),  # consumer, share and streams groups
    "leader": (78, 79),  # ShareFetch, ShareAcknowledge
    "internal": (52, 63, 83, 84, 85, 86, 87),  # Vote, BrokerHeartbeat, share-group state
    "any": (80,),  # AddRaftVoter: any broker forwards it to the controller
}


@pytest.mark.parametrize(
    ("api_key", "route"),
    [(key, route) for route, keys in KAFKA_4_3_ROUTES.items() for key in keys],
)
def test_newer_apis_are_routed_where_kafka_sends_them(api_key: int, route: str) -> None:
    assert {request_type(api_key, v).__route__ for v in APIS[api_key].versions} == {route}


def test_varint_and_varlong_fields() -> None:
    # No schema uses them today (records do, in kafkawire.records), but the serializer's
    # primitive dispatch covers every Kafka type, and a hand-made class proves it.
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Varints:
        __flexible__: ClassVar[bool] = False
        small: int = dataclasses.field(default=0, metadata={"kafka_type": "varint"})
        large: int = dataclasses.field(default=0, metadata={"kafka_type": "varlong"})

    message = Varints(small=-(2**31), large=2**63 - 1)
    data = encode(message)
    assert data == bytes.fromhex("ffffffff0f") + bytes.fromhex("feffffffffffffffff01")
    for path in DECODE_PATHS:
        with decoding_with(path):
            assert decode(Varints, data) == message, path
