"""What the client checks: responses against their requests, the version a request was built
at, its options and its arguments; on the fake cluster, its answers scripted by hooks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from kafkawire.client import KafkaClient
from kafkawire.cluster import ClientSettings
from kafkawire.errors import ProtocolError
from kafkawire.messages import APIS
from kafkawire.messages.metadata import v0 as metadata_v0
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.net import NoCommonVersionError
from kafkawire.testing.fake import FakeCluster, FakeConfig, HookContext
from tests.net.fakebroker import WAIT

# Metadata before v10 names no topic ids, so Fetch and Produce name topics by name (v12).
NO_TOPIC_IDS = FakeConfig(num_brokers=1, api_versions={3: range(10)})


@pytest.fixture
async def fake() -> AsyncIterator[FakeCluster]:
    """One broker that names no topic ids, with the topic t of 3 partitions."""
    async with FakeCluster(config=NO_TOPIC_IDS) as cluster:
        cluster.create_topic("t", 3)
        yield cluster


def answer_for(topic: str, partition: int) -> Any:
    """The handler's Fetch answer, moved to ``topic``/``partition``."""

    async def answer(request: Any, ctx: HookContext) -> Any:
        answered = await ctx.handle()
        (named,) = answered.responses
        (data,) = named.partitions
        moved = replace(named, topic=topic, partitions=(replace(data, partition_index=partition),))
        return replace(answered, responses=(moved,))

    return answer


def empty_answer(request: Any, ctx: HookContext) -> Any:
    return ctx.response()


@pytest.mark.parametrize(
    ("answer", "came"),
    [
        ({"topic": "t", "partition": 2}, "t/2"),
        ({"topic": "other", "partition": 0}, "other/0"),
    ],
)
async def test_a_fetch_answered_for_another_partition_is_a_protocol_error(
    fake: FakeCluster, answer: dict[str, Any], came: str
) -> None:
    fake.control(answer_for(**answer), api_key="Fetch", keep=True)
    async with KafkaClient(fake.bootstrap) as client:
        with pytest.raises(ProtocolError, match=f"does not answer t/0: it names {came}$"):
            await asyncio.wait_for(client.fetch("t", 0, 0), WAIT)


async def test_empty_answers_to_produce_fetch_and_list_offsets_are_protocol_errors(
    fake: FakeCluster,
) -> None:
    for api in ("Produce", "Fetch", "ListOffsets"):
        fake.control(empty_answer, api_key=api, keep=True)
    async with KafkaClient(fake.bootstrap) as client:
        for call in (
            client.produce("t", 0, [b"v"]),
            client.fetch("t", 0, 0),
            client.list_offsets("t", 0),
        ):
            with pytest.raises(ProtocolError, match="does not answer t/0: it names no partitions"):
                await asyncio.wait_for(call, WAIT)
    assert fake.records("t", 0) == []


async def test_without_topic_ids_fetch_names_the_topic_at_v12(fake: FakeCluster) -> None:
    async with KafkaClient(fake.bootstrap) as client:
        result = await asyncio.wait_for(client.fetch("t", 0, 0), WAIT)
    assert result.records == []
    [fetched] = fake.requests.of("Fetch")
    assert fetched.api_version == 12
    assert fetched.request.topics[0].topic == "t"


async def test_with_a_topic_id_fetch_names_the_topic_by_id(fake_cluster: FakeCluster) -> None:
    topic_id = fake_cluster.create_topic("t")
    async with KafkaClient(fake_cluster.bootstrap) as client:
        await asyncio.wait_for(client.fetch("t", 0, 0), WAIT)
    [fetched] = fake_cluster.requests.of("Fetch")
    assert fetched.api_version == APIS[1].versions[-1]
    assert fetched.request.topics[0].topic_id == topic_id


async def test_send_keeps_the_version_the_request_was_built_at(fake: FakeCluster) -> None:
    async with KafkaClient(fake.bootstrap) as client:
        response = await client.send(metadata_v0.MetadataRequest(topics=()))
        assert type(response) is metadata_v0.MetadataResponse
        sent = fake.requests.of("Metadata")[-1]
        assert (sent.api_version, sent.request.topics) == (0, ())  # v0: all topics
        with pytest.raises(NoCommonVersionError, match=r"Metadata .* versions 0-9, not version 12"):
            await client.send(metadata_v12.MetadataRequest(topics=None))
        negotiated = await client.send(metadata_v12.MetadataRequest(topics=None), negotiate=True)
        assert negotiated.__version__ == 9


async def test_wrong_argument_types_are_refused_before_anything_is_sent(
    fake_cluster: FakeCluster,
) -> None:
    async with KafkaClient(fake_cluster.bootstrap) as client:
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
    assert fake_cluster.requests.of("Produce") == []


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
