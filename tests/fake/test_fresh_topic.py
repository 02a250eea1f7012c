"""``fresh_topic``: one factory of new topics for every broker fixture."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kafkawire.messages.metadata import v8 as metadata_v8
from kafkawire.testing import fresh_topic, send_request, topic_name
from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.pytest_plugin import Broker


def test_names_are_new_each_time() -> None:
    assert topic_name() != topic_name()
    assert topic_name("orders").startswith("orders-")


async def test_on_the_fake_cluster(
    fake_cluster: FakeCluster, fresh_topic: Callable[..., Awaitable[str]]
) -> None:
    name = await fresh_topic(fake_cluster, partitions=3)
    assert len(fake_cluster.state.by_name[name].partitions) == 3


@dataclass(frozen=True)
class Address:
    """A broker known only by its address: what it serves is asked with ApiVersions."""

    bootstrap: str


async def test_on_a_broker_known_by_its_address(fake_cluster: FakeCluster) -> None:
    name = await fresh_topic(Address(fake_cluster.bootstrap), partitions=2)
    assert len(fake_cluster.state.by_name[name].partitions) == 2


async def test_without_create_topics_it_waits_for_auto_creation() -> None:
    async with FakeCluster(1, api_versions={19: range(0)}, default_partitions=4) as cluster:
        name = await fresh_topic(Address(cluster.bootstrap))
        assert len(cluster.state.by_name[name].partitions) == 4


async def test_on_each_broker_fixture(kafka_broker: Broker) -> None:
    name = await fresh_topic(kafka_broker)
    request = metadata_v8.MetadataRequest(
        topics=(metadata_v8.MetadataRequestTopic(name=name),), allow_auto_topic_creation=False
    )
    response = await send_request(kafka_broker.bootstrap.split(",")[0], request)
    assert response.topics[0].error_code == 0
