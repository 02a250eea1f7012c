"""What the client checks: responses against their requests, the version a request was built
at, its options and its arguments; against in-process fake brokers (loopback only)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from kafkawire.client import KafkaClient
from kafkawire.cluster import Backoff, ClientSettings
from kafkawire.errors import ProtocolError
from kafkawire.messages import APIS
from kafkawire.messages.metadata import v0 as metadata_v0
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.net import NoCommonVersionError
from tests.cluster.hostile import FakeCluster
from tests.net.fakebroker import WAIT, FakeClient, messages

FAST = Backoff(initial=0.01, maximum=0.02)


def fetch_answer(header: Any, *, topic: str, partition: int) -> Any:
    module = messages(1, header.request_api_version)
    data = module.PartitionData(partition_index=partition, high_watermark=0)
    return module.FetchResponse(
        responses=(module.FetchableTopicResponse(topic=topic, partitions=(data,)),)
    )


@pytest.mark.parametrize(
    ("answer", "came"),
    [
        ({"topic": "t", "partition": 2}, "t/2"),
        ({"topic": "other", "partition": 0}, "other/0"),
    ],
)
async def test_a_fetch_answered_for_another_partition_is_a_protocol_error(
    answer: dict[str, Any], came: str
) -> None:
    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        return fetch_answer(header, **answer)

    async with FakeCluster(1, handler) as brokers, KafkaClient(brokers.bootstrap) as client:
        with pytest.raises(ProtocolError, match=f"does not answer t/0: it names {came}$"):
            await asyncio.wait_for(client.fetch("t", 0, 0), WAIT)


async def test_empty_answers_to_produce_fetch_and_list_offsets_are_protocol_errors() -> None:
    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        module = messages(header.request_api_key, header.request_api_version)
        response = getattr(module, type(request).__name__.replace("Request", "Response"))
        return response()

    async with FakeCluster(1, handler) as brokers, KafkaClient(brokers.bootstrap) as client:
        for call in (
            client.produce("t", 0, [b"v"]),
            client.fetch("t", 0, 0),
            client.list_offsets("t", 0),
        ):
            with pytest.raises(ProtocolError, match="does not answer t/0: it names no partitions"):
                await asyncio.wait_for(call, WAIT)


async def test_without_topic_ids_fetch_names_the_topic_at_v12() -> None:
    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        return fetch_answer(header, topic="t", partition=0)

    async with FakeCluster(1, handler) as brokers, KafkaClient(brokers.bootstrap) as client:
        result = await asyncio.wait_for(client.fetch("t", 0, 0), WAIT)
        assert result.records == []
        [(header, request)] = brokers.requests(1, 1)
    assert header.request_api_version == 12
    assert request.topics[0].topic == "t"


async def test_with_a_topic_id_fetch_names_the_topic_by_id() -> None:
    topic_id = uuid.uuid4()

    async def handler(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        module = messages(1, header.request_api_version)
        data = module.PartitionData(partition_index=0)
        topic = module.FetchableTopicResponse(topic_id=topic_id, partitions=(data,))
        return module.FetchResponse(responses=(topic,))

    async with (
        FakeCluster(1, handler, topic_id=topic_id) as brokers,
        KafkaClient(brokers.bootstrap) as client,
    ):
        await asyncio.wait_for(client.fetch("t", 0, 0), WAIT)
        [(header, request)] = brokers.requests(1, 1)
    assert header.request_api_version == APIS[1].versions[-1]
    assert request.topics[0].topic_id == topic_id


async def test_send_keeps_the_version_the_request_was_built_at() -> None:
    versions = {key: info.versions for key, info in APIS.items()} | {3: range(10)}
    async with (
        FakeCluster(1, api_versions=versions) as brokers,
        KafkaClient(brokers.bootstrap) as client,
    ):
        response = await client.send(metadata_v0.MetadataRequest(topics=()))
        assert type(response) is metadata_v0.MetadataResponse
        header, request = brokers.requests(1, 3)[-1]
        assert (header.request_api_version, request.topics) == (0, ())  # v0: all topics
        with pytest.raises(NoCommonVersionError, match=r"Metadata .* versions 0-9, not version 12"):
            await client.send(metadata_v12.MetadataRequest(topics=None))
        negotiated = await client.send(metadata_v12.MetadataRequest(topics=None), negotiate=True)
        assert negotiated.__version__ == 9


async def test_wrong_argument_types_are_refused_before_anything_is_sent() -> None:
    async with FakeCluster(1) as brokers, KafkaClient(brokers.bootstrap) as client:
        with pytest.raises(TypeError, match="send\\(\\) takes a generated request object"):
            await client.send("MetadataRequest")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"the value of values\[1\] is str, not bytes"):
            await client.produce("t", 0, [b"ok", "text"])  # type: ignore[list-item]
        with pytest.raises(TypeError, match=r"the key of values\[0\] is int"):
            await client.produce("t", 0, [(1, b"v")])  # type: ignore[list-item]
        with pytest.raises(TypeError, match="not int; wrap a single value in a list"):
            await client.produce("t", 0, 5)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="not bytes; wrap a single value in a list"):
            await client.produce("t", 0, b"value")
        assert brokers.requests(1, 0) == []


def test_a_misspelled_option_names_the_option_and_the_class() -> None:
    with pytest.raises(
        TypeError, match="KafkaClient\\(\\) got an unexpected keyword argument 'request_timout'"
    ):
        KafkaClient("127.0.0.1:9092", request_timout=1.0)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("option", "value"),
    [("request_timeout", 0), ("retry_timeout", -1), ("max_frame_size", 0), ("client_id", 5)],
)
def test_settings_reject_bad_values_naming_the_setting(option: str, value: object) -> None:
    with pytest.raises((ValueError, TypeError), match=option):
        ClientSettings(**{option: value})
