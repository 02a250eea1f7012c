"""What ``send`` refuses at once, naming the argument: headers of the wrong shape, a
partition that is not an int, a topic name Kafka cannot have; and topics the broker refuses
(not authorized, invalid) fail at once with the broker's error, not after ``max_block_ms``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire.cluster import InvalidPartitionError
from kafkawire.errors import InvalidTopicError, TopicAuthorizationFailedError
from kafkawire.producer import Producer
from kafkawire.records import Header
from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.fake.faults import refuse_topic
from tests.net.fakebroker import WAIT


@pytest.mark.parametrize(
    "headers",
    [
        {"h": b"v"},
        [["h", b"v"]],
        [None],
        "h",
        b"h",
        [("h", b"v", b"extra")],
        [(b"h", b"v")],
        [("h", "text")],
        42,
    ],
    ids=repr,
)
async def test_headers_of_the_wrong_shape_are_refused_naming_headers(
    fake_cluster: FakeCluster, headers: Any
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap) as producer:
        with pytest.raises(TypeError, match=r"send\(\): headers"):
            await producer.send("t", b"v", partition=0, headers=headers)


async def test_headers_as_pairs_or_header_values_are_taken(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap) as producer:
        for headers in ([("a", b"1"), ("b", None)], (Header("a", b"1"),), []):
            await asyncio.wait_for(
                producer.send_and_wait("t", b"v", partition=0, headers=headers), WAIT
            )


@pytest.mark.parametrize("partition", ["0", True, 1.0, -1])
async def test_a_partition_that_is_not_a_partition_index_is_refused_naming_it(
    fake_cluster: FakeCluster, partition: Any
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap) as producer:
        with pytest.raises((TypeError, InvalidPartitionError), match=r"partition"):
            await producer.send("t", b"v", partition=partition)


@pytest.mark.parametrize("topic", ["", "a b", ".", "..", "x" * 250, "caf\u00e9", "a/b"])
async def test_a_topic_name_kafka_cannot_have_is_refused_without_asking(
    fake_cluster: FakeCluster, topic: str
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap) as producer:
        asked = len(fake_cluster.requests.of("Metadata"))
        with pytest.raises(InvalidTopicError, match="topic"):
            await asyncio.wait_for(producer.send(topic, b"v"), WAIT)
        assert len(fake_cluster.requests.of("Metadata")) == asked


async def test_a_topic_that_is_not_a_string_is_refused_naming_it(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap) as producer:
        with pytest.raises(TypeError, match="topic"):
            await producer.send(b"t", b"v")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("code", "error"), [(29, TopicAuthorizationFailedError), (17, InvalidTopicError)]
)
async def test_a_topic_the_broker_refuses_fails_at_once_with_its_error(
    fake_cluster: FakeCluster, code: int, error: type[Exception]
) -> None:
    fake_cluster.control(refuse_topic("secret.topic", code), api_key="Metadata", keep=True)
    async with Producer(fake_cluster.bootstrap) as producer:  # max_block_ms: 60 s
        with pytest.raises(error, match=r"'secret\.topic'"):
            await asyncio.wait_for(producer.send("secret.topic", b"v"), WAIT)
        with pytest.raises(error, match=r"'secret\.topic'"):
            await asyncio.wait_for(producer.partitions_for("secret.topic"), WAIT)


async def test_the_longest_legal_topic_name_is_asked_for(fake_cluster: FakeCluster) -> None:
    name = "a" * 249
    fake_cluster.create_topic(name)
    async with Producer(fake_cluster.bootstrap) as producer:
        assert (await asyncio.wait_for(producer.send_and_wait(name, b"v"), WAIT)).offset == 0
