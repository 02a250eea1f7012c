"""The admin client against the embedded brokers: every operation each one serves, and a clear
error (naming the API and the broker) for those it lacks."""

from __future__ import annotations

import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kafkawire.admin import (
    EARLIEST,
    LATEST,
    MAX_TIMESTAMP,
    AclBinding,
    AclFilter,
    AclOperation,
    Admin,
    ConfigResource,
    ConfigSource,
    ItemResults,
    NewTopic,
    ResetTo,
    ResourceType,
    ScramMechanism,
    ScramUpsert,
)
from kafkawire.cluster import RequestRefusedError, TopicPartition
from kafkawire.errors import (
    DecodeError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from kafkawire.messages.consumer_protocol_assignment import v0 as assignment_v0
from kafkawire.messages.consumer_protocol_subscription import v0 as subscription_v0
from kafkawire.messages.join_group import v9 as join_group
from kafkawire.messages.sync_group import v5 as sync_group
from kafkawire.net import NoCommonVersionError
from kafkawire.producer import Producer
from kafkawire.protocol import encode
from kafkawire.testing import fresh_topic
from kafkawire.testing.capabilities import api_key_of
from kafkawire.testing.pytest_plugin import (
    FAKE_BROKER_NAME,
    Broker,
    kafka_brokers,
    mock_cluster_bug,
    tansu_bug,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")

_names = (f"kafkawire-admin-{i}" for i in itertools.count())
_BOTH = ["mock_cluster", "tansu"]


async def lacks(broker: Broker, api: str, call: Callable[[], Awaitable[Any]]) -> bool:
    """Whether ``broker`` lacks ``api``; if it does, ``call()`` must fail naming the API and
    the broker's address."""
    if broker.capabilities.missing(api) is None:
        return False
    with pytest.raises(NoCommonVersionError) as caught:
        await call()
    assert caught.value.api_key == api_key_of(api)
    assert api in str(caught.value)
    assert any(address in str(caught.value) for address in broker.bootstrap.split(","))
    return True


async def topic_with(broker: Broker, values: int, partitions: int = 1) -> str:
    """A new topic holding ``values`` records in partition 0, one batch each (Tansu's
    ListOffsets "latest" is right only at a batch boundary); the mock cluster creates topics
    on first use, with 4 partitions."""
    name = await fresh_topic(broker, partitions)
    async with Producer(broker.bootstrap, linger_ms=0) as producer:
        for i in range(values):
            await producer.send_and_wait(name, b"v%d" % i, partition=0, timestamp_ms=1000 * (i + 1))
    return name


async def test_create_topics_answers_each_topic(kafka_broker: Broker) -> None:
    first, second = next(_names), next(_names)
    async with Admin(kafka_broker.bootstrap) as admin:
        if await lacks(kafka_broker, "CreateTopics", lambda: admin.create_topics([])):
            return
        await admin.create_topics([NewTopic(first, 2)])
        created = await admin.create_topics(
            [NewTopic(first, 2), NewTopic(second, 3, configs={"retention.ms": "60000"})]
        )
        assert isinstance(created.errors[first], TopicAlreadyExistsError)
        assert created[second].name == second
        assert {first, second} <= set(await admin.list_topics())
        described = await admin.describe_topics([first, second, "kafkawire-no-such-topic"])
        assert [p.partition for p in described[second].partitions] == [0, 1, 2]
        assert len(described[first].partitions) == 2
        assert described[second].partitions[0].leader in described[second].partitions[0].replicas
        with pytest.raises(UnknownTopicOrPartitionError):
            described["kafkawire-no-such-topic"]
        deleted = await admin.delete_topics([first, "kafkawire-no-such-topic"])
        assert deleted[first] is None
        assert isinstance(deleted.errors["kafkawire-no-such-topic"], UnknownTopicOrPartitionError)
        assert first not in await admin.list_topics()


async def test_topics_no_broker_may_create_are_refused_alone(tansu_broker: Broker) -> None:
    good = next(_names)
    refused = [
        NewTopic("", 1),
        NewTopic("a/b", 1),
        NewTopic(next(_names), 0),
        NewTopic(next(_names), 1, replication_factor=0),
    ]
    async with Admin(tansu_broker.bootstrap) as admin:
        created = await admin.create_topics([*refused, NewTopic(good, 1)])
        assert created[good].name == good
        errors = [created.outcome(t.name) for t in refused]
        assert [type(e) for e in errors] == [
            InvalidTopicError,
            InvalidTopicError,
            InvalidPartitionsError,
            InvalidReplicationFactorError,
        ]
        assert "a topic name cannot be empty" in str(errors[0])
        assert "must be at least 1, or -1 for the broker's default, not 0" in str(errors[2])
        assert [t.name for t in refused[2:]] == [
            n for n in [t.name for t in refused[2:]] if n not in await admin.list_topics()
        ]
        # With nothing left to send, nothing is sent: no broker is even asked.
        alone = await admin.create_topics([NewTopic("..", 1)])
        assert isinstance(alone.outcome(".."), InvalidTopicError)


@kafka_brokers(
    tansu=tansu_bug("CreateTopics with validate_only creates the topic"), mock_cluster=False
)
async def test_validate_only_creates_nothing(kafka_broker: Broker) -> None:
    name = next(_names)
    async with Admin(kafka_broker.bootstrap) as admin:
        (await admin.create_topics([NewTopic(name, 1)], validate_only=True))[name]
        assert name not in await admin.list_topics()


@kafka_brokers(
    tansu=tansu_bug("Metadata by topic id answers INVALID_TOPIC_EXCEPTION", raises=Exception),
    mock_cluster=False,
)
async def test_describe_topics_by_id(kafka_broker: Broker) -> None:
    name = next(_names)
    async with Admin(kafka_broker.bootstrap) as admin:
        topic_id = (await admin.create_topics([NewTopic(name, 2)]))[name].topic_id
        assert topic_id is not None
        described = (await admin.describe_topics([topic_id]))[topic_id]
        assert (described.name, len(described.partitions)) == (name, 2)


async def test_apis_a_broker_lacks_fail_naming_it(kafka_broker: Broker) -> None:
    async with Admin(kafka_broker.bootstrap) as admin:
        checked = [
            await lacks(
                kafka_broker, "CreatePartitions", lambda: admin.create_partitions({"t": 3})
            ),
            await lacks(kafka_broker, "DescribeLogDirs", admin.describe_log_dirs),
            await lacks(kafka_broker, "OffsetDelete", lambda: admin.delete_group_offsets("g", [])),
            await lacks(kafka_broker, "DeleteAcls", lambda: admin.delete_acls([AclFilter()])),
        ]
    if kafka_broker.name == FAKE_BROKER_NAME:  # it serves CreatePartitions and OffsetDelete
        assert checked == [False, True, False, True]
    else:
        assert all(checked)  # neither embedded broker has these


async def test_topic_and_broker_configs(kafka_broker: Broker) -> None:
    async with Admin(kafka_broker.bootstrap) as admin:
        if await lacks(
            kafka_broker,
            "DescribeConfigs",
            lambda: _first(admin.describe_configs([ConfigResource.topic("t")])),
        ):
            return
        name = next(_names)
        (await admin.create_topics([NewTopic(name, 1, configs={"retention.ms": "60000"})]))[name]
        topic = ConfigResource.topic(name)
        described = await admin.describe_configs([topic])
        assert described[topic]["retention.ms"].value == "60000"
        altered = await admin.incremental_alter_configs({topic: {"retention.ms": "120000"}})
        assert altered[topic] is None
        described = await admin.describe_configs([topic])
        assert described[topic]["retention.ms"].value == "120000"


@kafka_brokers(
    tansu=tansu_bug("DescribeConfigs of a broker answers no configs"), mock_cluster=False
)
async def test_broker_configs_are_described(kafka_broker: Broker) -> None:
    async with Admin(kafka_broker.bootstrap) as admin:
        broker = ConfigResource.broker((await admin.describe_cluster()).brokers[0].node_id)
        configs = (await admin.describe_configs([broker]))[broker]
        assert configs
        assert all(c.source is not ConfigSource.UNKNOWN for c in configs.values())


async def test_describe_cluster(kafka_broker: Broker) -> None:
    # The mock cluster lacks DescribeCluster: the answer then comes from Metadata.
    async with Admin(kafka_broker.bootstrap) as admin:
        cluster = await admin.describe_cluster()
    expected = 3 if kafka_broker.name.startswith(("librdkafka", FAKE_BROKER_NAME)) else 1
    assert len(cluster.brokers) == expected
    assert cluster.cluster_id
    bootstrap_port = int(kafka_broker.bootstrap.split(",")[0].rsplit(":", 1)[1])
    assert bootstrap_port in {b.port for b in cluster.brokers}


async def test_list_offsets_earliest_and_latest_per_partition(kafka_broker: Broker) -> None:
    topic = await topic_with(kafka_broker, 3, partitions=2)
    async with Admin(kafka_broker.bootstrap) as admin:
        listed = await admin.list_offsets(
            {
                TopicPartition(topic, 0): LATEST,
                TopicPartition(topic, 1): EARLIEST,
                TopicPartition("kafkawire-no-such-topic", 0): LATEST,
            }
        )
    assert listed[TopicPartition(topic, 0)].offset == 3
    assert listed[TopicPartition(topic, 1)].offset == 0
    assert list(listed.errors) == [TopicPartition("kafkawire-no-such-topic", 0)]


@kafka_brokers(
    tansu=tansu_bug("ListOffsets by time answers 0"),
    mock_cluster=mock_cluster_bug("ListOffsets by time answers -1"),
)
async def test_list_offsets_by_time(kafka_broker: Broker) -> None:
    topic = await topic_with(kafka_broker, 3)  # timestamps 1000, 2000, 3000
    async with Admin(kafka_broker.bootstrap) as admin:
        tp = TopicPartition(topic, 0)
        assert (await admin.list_offsets({tp: 1500}))[tp].offset == 1


@kafka_brokers(
    tansu=tansu_bug("ListOffsets MAX_TIMESTAMP drops the connection", raises=RequestRefusedError),
    mock_cluster=mock_cluster_bug("ListOffsets MAX_TIMESTAMP answers -1"),
)
async def test_list_offsets_max_timestamp(kafka_broker: Broker) -> None:
    topic = await topic_with(kafka_broker, 3)
    async with Admin(kafka_broker.bootstrap) as admin:
        tp = TopicPartition(topic, 0)
        found = (await admin.list_offsets({tp: MAX_TIMESTAMP}))[tp]
    assert (found.offset, found.timestamp) == (2, 3000)


@kafka_brokers(tansu=tansu_bug("DeleteRecords drops the connection", raises=RequestRefusedError))
async def test_delete_records(kafka_broker: Broker) -> None:
    topic = await topic_with(kafka_broker, 3)
    async with Admin(kafka_broker.bootstrap) as admin:
        tp = TopicPartition(topic, 0)
        if await lacks(
            kafka_broker, "DeleteRecords", lambda: _first(admin.delete_records({tp: 2}))
        ):
            return
        assert (await admin.delete_records({tp: 2}))[tp] == 2
        assert (await admin.list_offsets({tp: EARLIEST}))[tp].offset == 2


async def test_committed_offsets_lag_and_resets(kafka_broker: Broker) -> None:
    topic = await topic_with(kafka_broker, 5)
    group = next(_names)
    tp = TopicPartition(topic, 0)
    async with Admin(kafka_broker.bootstrap) as admin:
        assert (await admin.alter_group_offsets(group, {tp: 2}))[tp] is None
        assert (await admin.list_group_offsets(group, [tp]))[tp].offset == 2
        dry = await admin.reset_offsets(group, [tp], ResetTo.shift_by(-1), dry_run=True)
        assert dry[tp] == 1
        assert (await admin.list_group_offsets(group, [tp]))[tp].offset == 2
        for to, expected in [
            (ResetTo.earliest(), 0),
            (ResetTo.latest(), 5),
            (ResetTo.shift_by(-2), 3),
            (ResetTo.shift_by(100), 5),  # kept within the partition
            (ResetTo.offset(4), 4),
        ]:
            assert (await admin.reset_offsets(group, [tp], to))[tp] == expected
            assert (await admin.list_group_offsets(group, [tp]))[tp].offset == expected


@kafka_brokers(
    mock_cluster=mock_cluster_bug(
        "OffsetFetch for all topics answers a null topics array", raises=DecodeError
    )
)
async def test_group_lag(kafka_broker: Broker) -> None:
    topic = await topic_with(kafka_broker, 5)
    group = next(_names)
    tp = TopicPartition(topic, 0)
    async with Admin(kafka_broker.bootstrap) as admin:
        (await admin.alter_group_offsets(group, {tp: 2}))[tp]
        lag = (await admin.group_lag(group))[tp]
    assert (lag.committed, lag.end, lag.lag) == (2, 5, 3)


@kafka_brokers(
    tansu=tansu_bug("ListOffsets by time answers 0"),
    mock_cluster=mock_cluster_bug("ListOffsets by time answers -1"),
)
async def test_reset_offsets_to_a_time(kafka_broker: Broker) -> None:
    topic = await topic_with(kafka_broker, 3)
    group = next(_names)
    tp = TopicPartition(topic, 0)
    async with Admin(kafka_broker.bootstrap) as admin:
        assert (await admin.reset_offsets(group, [topic], ResetTo.datetime(2000)))[tp] == 1
        future = int(time.time() * 1000) + 3_600_000
        assert (await admin.reset_offsets(group, [tp], ResetTo.datetime(future)))[tp] == 3


async def join(admin: Admin, group: str, topic: str) -> None:
    """One static member joins ``group`` (classic protocol), subscribed to ``topic``, and as
    leader assigns itself partition 0."""
    subscription = subscription_v0.ConsumerProtocolSubscription(topics=(topic,))
    assignment = assignment_v0.ConsumerProtocolAssignment(
        assigned_partitions=(assignment_v0.TopicPartition(topic=topic, partitions=(0,)),)
    )
    joined = await admin.cluster.send(
        join_group.JoinGroupRequest(
            group_id=group,
            session_timeout_ms=6000,  # Tansu holds each JoinGroup for half of it
            rebalance_timeout_ms=6000,
            group_instance_id="instance-1",  # static: no second join for a member id
            protocol_type="consumer",
            protocols=(
                join_group.JoinGroupRequestProtocol(
                    name="range", metadata=b"\0\0" + encode(subscription)
                ),
            ),
        )
    )
    assert joined.error_code == 0
    synced = await admin.cluster.send(
        sync_group.SyncGroupRequest(
            group_id=group,
            generation_id=joined.generation_id,
            member_id=joined.member_id,
            group_instance_id="instance-1",
            protocol_type="consumer",
            protocol_name="range",
            assignments=(
                sync_group.SyncGroupRequestAssignment(
                    member_id=joined.member_id, assignment=b"\0\0" + encode(assignment)
                ),
            ),
        )
    )
    assert synced.error_code == 0


async def test_groups_list_describe_delete(kafka_broker: Broker) -> None:
    async with Admin(kafka_broker.bootstrap) as admin:
        if await lacks(kafka_broker, "ListGroups", admin.list_groups):
            # Per group: the error is that group's result, raised when it is looked up.
            describe = admin.describe_groups
            assert await lacks(kafka_broker, "DescribeGroups", lambda: _first(describe(["g"])))
            delete = admin.delete_groups
            assert await lacks(kafka_broker, "DeleteGroups", lambda: _first(delete(["g"])))
            return
        topic = await topic_with(kafka_broker, 1)
        group, idle = next(_names), next(_names)
        await join(admin, group, topic)
        (await admin.alter_group_offsets(idle, {TopicPartition(topic, 0): 1}))[
            TopicPartition(topic, 0)
        ]
        assert idle in {g.group_id for g in await admin.list_groups()}
        described = (await admin.describe_groups([group]))[group]
        # Kafka also names the chosen assignor ("range") in protocol; Tansu leaves it empty.
        assert (described.state, described.protocol_type) == ("Stable", "consumer")
        assert len(described.members) == 1
        assert (await admin.delete_groups([idle]))[idle] is None
        assert idle not in {g.group_id for g in await admin.list_groups()}


@kafka_brokers(
    tansu=tansu_bug("DescribeGroups answers members without their metadata and assignment"),
    mock_cluster=False,
)
async def test_group_members_show_subscription_and_assignment(kafka_broker: Broker) -> None:
    topic = await topic_with(kafka_broker, 1)
    group = next(_names)
    async with Admin(kafka_broker.bootstrap) as admin:
        await join(admin, group, topic)
        [member] = (await admin.describe_groups([group]))[group].members
    assert member.group_instance_id == "instance-1"
    assert member.topics == (topic,)
    assert member.assignment == (TopicPartition(topic, 0),)


async def _first(results: Awaitable[ItemResults[Any, Any]]) -> Any:
    answered = await results
    return answered[next(iter(answered))]


@tansu_bug("CreateAcls answers a null results array", raises=DecodeError)
async def test_acls_round_trip(tansu_broker: Broker) -> None:
    binding = AclBinding(ResourceType.TOPIC, next(_names), "User:alice", AclOperation.READ)
    async with Admin(tansu_broker.bootstrap) as admin:
        assert (await admin.create_acls([binding]))[binding] is None
        assert binding in await admin.describe_acls(AclFilter(resource_name=binding.resource_name))


async def test_describe_acls_with_none_set(tansu_broker: Broker) -> None:
    async with Admin(tansu_broker.bootstrap) as admin:
        assert await admin.describe_acls(AclFilter(resource_name=next(_names))) == []


@tansu_bug("DescribeUserScramCredentials answers a null results array", raises=DecodeError)
async def test_scram_credentials(tansu_broker: Broker) -> None:
    async with Admin(tansu_broker.bootstrap) as admin:
        upsert = ScramUpsert("kafkawire-user", "secret", ScramMechanism.SCRAM_SHA_512, 8192)
        assert (await admin.alter_user_scram_credentials([upsert]))["kafkawire-user"] is None
        [credential] = (await admin.describe_user_scram_credentials(["kafkawire-user"]))[
            "kafkawire-user"
        ]
        assert (credential.mechanism, credential.iterations) == (ScramMechanism.SCRAM_SHA_512, 8192)
