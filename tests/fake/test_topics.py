"""Topics and configs against the fake: kafkawire's admin client, and Metadata on the wire."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafkawire.admin import Admin, AlterConfigOp, ConfigResource, ConfigResourceType, NewTopic
from kafkawire.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from kafkawire.messages.create_topics import v7 as create_topics_v7
from kafkawire.messages.metadata import v3 as metadata_v3
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.testing.fake import Error, FakeCluster

from .wire import Wire


def ask(*names: str, auto_create: bool = True) -> Any:
    return metadata_v12.MetadataRequest(
        topics=tuple(metadata_v12.MetadataRequestTopic(name=n) for n in names),
        allow_auto_topic_creation=auto_create,
    )


async def test_admin_creates_describes_grows_and_deletes(fake_cluster: FakeCluster) -> None:
    async with Admin(fake_cluster.bootstrap) as admin:
        created = await admin.create_topics(
            [NewTopic("a", 3), NewTopic("b", 1, replication_factor=1)]
        )
        assert created["a"].partitions == 3
        again = await admin.create_topics([NewTopic("a", 3)])
        assert isinstance(again.errors["a"], TopicAlreadyExistsError)
        described = (await admin.describe_topics(["a"]))["a"]
        assert [p.leader for p in described.partitions] == [0, 1, 2]  # leaders spread
        assert all(len(p.replicas) == 3 for p in described.partitions)
        assert described.topic_id == fake_cluster.topic_id("a")
        grown = await admin.create_partitions({"a": 5})
        assert grown.errors == {}
        shrink = await admin.create_partitions({"a": 2})
        assert isinstance(shrink.errors["a"], InvalidPartitionsError)
        assert sorted(await admin.list_topics()) == ["a", "b"]
        deleted = await admin.delete_topics(["b", "nope"])
        assert isinstance(deleted.errors["nope"], UnknownTopicOrPartitionError)
    assert len(fake_cluster.state.by_name["a"].partitions) == 5
    assert "b" not in fake_cluster.state.by_name


async def test_create_topics_checks_as_kafkas_controller(fake_cluster: FakeCluster) -> None:
    async with Admin(fake_cluster.bootstrap) as admin:
        results = await admin.create_topics(
            [
                NewTopic("too-many-replicas", 1, replication_factor=4),
                NewTopic("bad name!", 1),
                NewTopic("odd-config", 1, configs={"no.such.config": "1"}),
                NewTopic("zero", 0),
            ]
        )
    assert isinstance(results.errors["too-many-replicas"], InvalidReplicationFactorError)
    assert "only 3 broker(s) are registered" in str(results.errors["too-many-replicas"])
    assert results.errors["bad name!"].code == Error.INVALID_TOPIC_EXCEPTION  # type: ignore[attr-defined]
    assert results.errors["odd-config"].code == Error.INVALID_CONFIG  # type: ignore[attr-defined]
    assert isinstance(results.errors["zero"], InvalidPartitionsError)
    assert fake_cluster.state.by_name == {}


async def test_create_topics_validate_only_and_its_answer(fake_cluster: FakeCluster) -> None:
    request = create_topics_v7.CreateTopicsRequest(
        topics=(
            create_topics_v7.CreatableTopic(
                name="t",
                num_partitions=-1,
                replication_factor=-1,
                configs=(create_topics_v7.CreatableTopicConfig(name="retention.ms", value="10"),),
            ),
            create_topics_v7.CreatableTopic(name="t", num_partitions=1, replication_factor=1),
        ),
        validate_only=True,
    )
    async with Wire(fake_cluster) as wire:
        response = await wire.send(request)
    checked, twice = response.topics
    assert (checked.error_code, twice.error_code) == (
        0,
        0,
    ) or twice.error_code == Error.INVALID_REQUEST
    assert checked.error_code == Error.INVALID_REQUEST  # named twice
    assert fake_cluster.state.by_name == {}
    alone = create_topics_v7.CreateTopicsRequest(topics=request.topics[:1], validate_only=True)
    async with Wire(fake_cluster) as wire:
        (result,) = (await wire.send(alone)).topics
    assert (result.error_code, result.num_partitions, result.replication_factor) == (0, 1, 3)
    assert result.topic_id == uuid.UUID(int=0)
    configs = {c.name: (c.value, c.config_source) for c in result.configs}
    assert configs["retention.ms"] == ("10", 1)
    assert configs["cleanup.policy"] == ("delete", 5)


async def test_metadata_auto_creates_like_kafka(fake_cluster: FakeCluster) -> None:
    async with Wire(fake_cluster) as wire:
        first = (await wire.send(ask("new"))).topics[0]
        second = (await wire.send(ask("new"))).topics[0]
        refused = (await wire.send(ask("other", auto_create=False))).topics[0]
        invalid = (await wire.send(ask("a/b"))).topics[0]
        by_id = await wire.send(
            metadata_v12.MetadataRequest(
                topics=(metadata_v12.MetadataRequestTopic(name=None, topic_id=uuid.uuid4()),)
            )
        )
        old = (
            await wire.send(
                metadata_v3.MetadataRequest(topics=(metadata_v3.MetadataRequestTopic(name="old"),))
            )
        ).topics[0]
    assert (first.error_code, first.partitions) == (Error.LEADER_NOT_AVAILABLE, ())
    assert (second.error_code, len(second.partitions)) == (0, 1)
    assert second.topic_id == first.topic_id == fake_cluster.topic_id("new")
    assert refused.error_code == Error.UNKNOWN_TOPIC_OR_PARTITION
    assert invalid.error_code == Error.INVALID_TOPIC_EXCEPTION
    assert (by_id.topics[0].error_code, by_id.topics[0].name) == (Error.UNKNOWN_TOPIC_ID, None)
    assert old.error_code == Error.LEADER_NOT_AVAILABLE  # before v4 requests always auto-create


async def test_auto_creation_can_be_off() -> None:
    async with FakeCluster(1, auto_create_topics=False, default_partitions=4) as cluster:
        async with Wire(cluster) as wire:
            topic = (await wire.send(ask("x"))).topics[0]
        assert topic.error_code == Error.UNKNOWN_TOPIC_OR_PARTITION
        cluster.create_topic("y", 4)


async def test_describe_configs_of_topics_and_brokers(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t", configs={"retention.ms": "1000"})
    async with Admin(fake_cluster.bootstrap) as admin:
        described = await admin.describe_configs(
            [
                ConfigResource(ConfigResourceType.TOPIC, "t"),
                ConfigResource(ConfigResourceType.BROKER, "1"),
            ]
        )
        topic = described[ConfigResource(ConfigResourceType.TOPIC, "t")]
        broker = described[ConfigResource(ConfigResourceType.BROKER, "1")]
        missing = await admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "nope")])
    assert topic["retention.ms"].value == "1000"
    assert topic["cleanup.policy"].value == "delete"
    assert broker["num.partitions"].value == "1"
    assert missing.errors


async def test_incremental_alter_configs_of_a_topic(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t", configs={"retention.ms": "1000"})
    topic = ConfigResource(ConfigResourceType.TOPIC, "t")
    async with Admin(fake_cluster.bootstrap) as admin:
        checked = await admin.incremental_alter_configs(
            {topic: {"segment.ms": "5"}}, validate_only=True
        )
        assert checked[topic] is None
        assert fake_cluster.state.by_name["t"].configs == {"retention.ms": "1000"}
        altered = await admin.incremental_alter_configs(
            {
                topic: {
                    "retention.ms": None,  # back to the default
                    "segment.ms": "5",
                    "cleanup.policy": (AlterConfigOp.APPEND, "compact"),
                }
            }
        )
        assert altered[topic] is None
        described = (await admin.describe_configs([topic]))[topic]
        assert [described[k].value for k in ("retention.ms", "segment.ms", "cleanup.policy")] == [
            "604800000",
            "5",
            "delete,compact",
        ]
        refused = await admin.incremental_alter_configs(
            {
                topic: {"retention.ms": (AlterConfigOp.APPEND, "1")},
                ConfigResource(ConfigResourceType.TOPIC, "nope"): {"segment.ms": "1"},
                ConfigResource(ConfigResourceType.BROKER, "0"): {"num.partitions": "2"},
            }
        )
    assert {r: type(e) for r, e in refused.errors.items()} == {
        topic: InvalidConfigError,
        ConfigResource(ConfigResourceType.TOPIC, "nope"): UnknownTopicOrPartitionError,
        ConfigResource(ConfigResourceType.BROKER, "0"): InvalidRequestError,
    }


def test_create_topic_refuses_what_create_topics_would() -> None:
    cluster = FakeCluster(1)
    cluster.create_topic("t")
    for call, match in [
        (lambda: cluster.create_topic("t"), "already exists"),
        (lambda: cluster.create_topic("x", 0), "at least one partition"),
        (lambda: cluster.create_topic("y", replication_factor=2), "exceeds 1 brokers"),
        (lambda: cluster.create_topic("a b"), "characters"),
        (lambda: cluster.create_topic("z", configs={"nope": "1"}), "unknown topic configs"),
    ]:
        with pytest.raises(ValueError, match=match):
            call()
