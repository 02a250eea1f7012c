"""Converting messages between versions keeps meaning or refuses, as Kafka's schemas say."""

from __future__ import annotations

import uuid

import pytest

from kafkawire.messages import APIS, request_type
from kafkawire.messages.fetch import v12 as fetch_v12
from kafkawire.messages.fetch import v13 as fetch_v13
from kafkawire.messages.metadata import v0 as metadata_v0
from kafkawire.messages.metadata import v4 as metadata_v4
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.messages.offset_fetch import v7 as offset_fetch_v7
from kafkawire.messages.produce import v3 as produce_v3
from kafkawire.messages.produce import v9 as produce_v9
from kafkawire.protocol import VersionConversionError, convert


def test_fields_carry_over_by_name_through_nested_structs() -> None:
    request = produce_v9.ProduceRequest(
        acks=-1,
        timeout_ms=500,
        topic_data=(
            produce_v9.TopicProduceData(
                name="t", partition_data=(produce_v9.PartitionProduceData(index=2, records=b"r"),)
            ),
        ),
    )
    older = convert(request, 3)
    assert isinstance(older, produce_v3.ProduceRequest)
    assert older.topic_data[0].partition_data[0].index == 2
    assert bytes(older.topic_data[0].partition_data[0].records or b"") == b"r"
    assert convert(older, 9) == request


def test_an_ignorable_field_is_dropped() -> None:
    # MetadataRequest v12 topic_id is ignorable: losing it on the way to v4 is allowed.
    request = metadata_v12.MetadataRequest(
        topics=(metadata_v12.MetadataRequestTopic(name="t"),), allow_auto_topic_creation=False
    )
    assert convert(request, 4) == metadata_v4.MetadataRequest(
        topics=(metadata_v4.MetadataRequestTopic(name="t"),), allow_auto_topic_creation=False
    )


def test_a_meaningful_field_that_the_target_lacks_is_refused() -> None:
    request = metadata_v12.MetadataRequest(topics=None, allow_auto_topic_creation=False)
    with pytest.raises(
        VersionConversionError, match=r"^MetadataRequest\.allow_auto_topic_creation is set"
    ):
        convert(request, 0)


def test_null_that_the_target_cannot_express_is_refused() -> None:
    # OffsetFetch asks for all topics with null from v2; v0-1 cannot ask that.
    with pytest.raises(VersionConversionError, match=r"OffsetFetchRequest\.topics is null"):
        convert(offset_fetch_v7.OffsetFetchRequest(topics=None), 1)


def test_metadata_all_topics_is_empty_at_v0_and_null_after() -> None:
    # v0: an empty list asks for every topic; v1+: null does, and an empty list asks for none.
    assert convert(metadata_v12.MetadataRequest(topics=None), 0) == metadata_v0.MetadataRequest()
    assert convert(metadata_v0.MetadataRequest(topics=()), 12).topics is None
    with pytest.raises(VersionConversionError, match=r"MetadataRequest\.topics is empty"):
        convert(metadata_v12.MetadataRequest(topics=()), 0)
    named = metadata_v12.MetadataRequest(topics=(metadata_v12.MetadataRequestTopic(name="t"),))
    assert convert(convert(named, 0), 12) == named


def _fetch_topic(version: int, **naming: object) -> object:
    module = {12: fetch_v12, 13: fetch_v13}[version]
    partition = module.FetchPartition(partition=0)
    return module.FetchRequest(topics=(module.FetchTopic(**naming, partitions=(partition,)),))


def test_a_topic_named_by_name_is_not_sent_where_it_needs_an_id() -> None:
    # Both fields are ignorable in Kafka's schema, yet dropping one for the other's default
    # would ask for the all-zero topic id (v13) or the empty topic name (v12).
    with pytest.raises(VersionConversionError, match=r"FetchRequest\.topics\[0\] names its topic"):
        convert(_fetch_topic(12, topic="orders"), 13)
    with pytest.raises(VersionConversionError, match="names its topic"):
        convert(_fetch_topic(13, topic_id=uuid.uuid4()), 12)
    produce = produce_v9.ProduceRequest(topic_data=(produce_v9.TopicProduceData(name="t"),))
    with pytest.raises(VersionConversionError, match="names its topic"):
        convert(produce, 13)


def test_converting_to_the_same_version_is_the_identity() -> None:
    request = metadata_v12.MetadataRequest()
    assert convert(request, 12) is request


@pytest.mark.parametrize("api_key", sorted(APIS))
def test_default_requests_convert_to_every_version(api_key: int) -> None:
    info = APIS[api_key]
    newest = request_type(api_key, info.versions[-1])()
    for version in info.versions:
        if api_key == 3 and version == 0:
            continue  # "no topics", the default, cannot be asked at v0 (tested above)
        converted = convert(newest, version)
        assert type(converted) is request_type(api_key, version)
        assert convert(converted, info.versions[-1]) == newest


def test_struct_type_finds_the_nested_class_of_a_version() -> None:
    from kafkawire.messages.produce import v13 as produce_v13
    from kafkawire.protocol import struct_type

    topic_cls = struct_type(request_type(0, 13), "topic_data")
    assert topic_cls is produce_v13.TopicProduceData
    assert struct_type(topic_cls, "partition_data") is produce_v13.PartitionProduceData
    with pytest.raises(TypeError, match="acks is not a struct"):
        struct_type(produce_v13.ProduceRequest, "acks")
