"""The fake cluster's life and what every connection sees: versions, order, brokers that stop."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from kafkawire.client import KafkaClient
from kafkawire.error_codes import ERROR_CODES
from kafkawire.messages import request_type
from kafkawire.messages.api_versions import v0 as api_versions_v0
from kafkawire.messages.api_versions import v3 as api_versions_v3
from kafkawire.messages.describe_acls import v1 as describe_acls_v1
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.protocol import encode_request
from kafkawire.testing.fake import Error, FakeCluster, FakeConfig

from .wire import Wire


def test_every_error_code_is_kafkas() -> None:
    names = {e.code: e.name for e in ERROR_CODES}
    for error in Error:
        if error is not Error.NONE:
            assert names[error.value] == error.name


def test_bad_settings_are_refused_naming_them() -> None:
    with pytest.raises(ValueError, match="num_brokers"):
        FakeConfig(num_brokers=0)
    with pytest.raises(ValueError, match="group_min_session_timeout_ms"):
        FakeConfig(group_min_session_timeout_ms=10, group_max_session_timeout_ms=5)
    with pytest.raises(ValueError, match="API key 29"):
        FakeCluster(api_versions={29: range(2)})  # the fake serves no DescribeAcls


async def test_bootstrap_lists_every_broker_and_metadata_names_them(
    fake_cluster: FakeCluster,
) -> None:
    addresses = fake_cluster.bootstrap.split(",")
    assert len(addresses) == 3
    async with Wire(fake_cluster) as wire:
        metadata = await wire.send(metadata_v12.MetadataRequest(topics=None))
    assert [f"{b.host}:{b.port}" for b in metadata.brokers] == addresses
    assert [b.node_id for b in metadata.brokers] == [0, 1, 2]
    assert metadata.cluster_id == "kafkawire-fake"
    assert metadata.controller_id == 0


async def test_api_versions_lists_what_is_served(fake_cluster: FakeCluster) -> None:
    async with Wire(fake_cluster) as wire:
        response = await wire.send(
            api_versions_v3.ApiVersionsRequest(
                client_software_name="tests", client_software_version="1.0"
            )
        )
    ranges = {k.api_key: range(k.min_version, k.max_version + 1) for k in response.api_keys}
    assert ranges == dict(fake_cluster.served)
    assert ranges[1] == range(4, 19)  # Fetch from v4
    assert ranges[0] == range(3, 14)  # Produce from v3
    assert ranges[11] == range(10)  # JoinGroup v0-9, from the group coordinator
    assert ranges[68] == range(2)  # ConsumerGroupHeartbeat (KIP-848)


async def test_api_versions_refuses_bad_software_names(fake_cluster: FakeCluster) -> None:
    async with Wire(fake_cluster) as wire:
        response = await wire.send(
            api_versions_v3.ApiVersionsRequest(
                client_software_name="-bad-", client_software_version="1"
            )
        )
    assert response.error_code == Error.INVALID_REQUEST
    assert response.api_keys == ()


async def test_api_versions_at_an_unknown_version_is_answered_in_v0(
    fake_cluster: FakeCluster,
) -> None:
    """KIP-511: the broker answers a version it does not know with v0, error 35 and its range."""
    async with Wire(fake_cluster) as wire:
        assert wire.writer is not None
        frame = bytearray(
            encode_request(api_versions_v0.ApiVersionsRequest(), correlation_id=7, client_id="x")
        )
        frame[6:8] = (99).to_bytes(2, "big")  # the version, after size and api key
        wire.writer.write(bytes(frame))
        response = await wire.read(api_versions_v0.ApiVersionsRequest())
    assert response.error_code == Error.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 4)]


async def test_a_version_not_served_closes_the_connection() -> None:
    """Kafka closes a connection whose request has a version it does not serve."""
    async with FakeCluster(1, api_versions={3: range(10)}) as cluster:
        async with Wire(cluster) as wire:
            wire.write(metadata_v12.MetadataRequest(topics=None))
            assert await wire.closed()
        assert cluster.requests.of("Metadata") == []


async def test_an_api_not_served_closes_the_connection(fake_cluster: FakeCluster) -> None:
    async with Wire(fake_cluster) as wire:
        wire.write(describe_acls_v1.DescribeAclsRequest())
        assert await wire.closed()


async def test_pipelined_requests_are_answered_in_order(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    request = metadata_v12.MetadataRequest(topics=(metadata_v12.MetadataRequestTopic(name="t"),))
    async with Wire(fake_cluster) as wire:
        ids = [wire.write(request) for _ in range(5)]
        assert ids == [1, 2, 3, 4, 5]
        answers = [await wire.read(request) for _ in ids]
    assert all(a.topics[0].name == "t" for a in answers)
    assert len(fake_cluster.requests.of("Metadata")) == 5


async def test_requests_are_logged_with_the_node_that_got_them(fake_cluster: FakeCluster) -> None:
    async with Wire(fake_cluster, node_id=2) as wire:
        await wire.send(metadata_v12.MetadataRequest(topics=None))
    (logged,) = fake_cluster.requests.of(3)
    assert (logged.node_id, logged.api_name, logged.api_version) == (2, "Metadata", 12)
    assert logged.header.client_id == "wire"
    assert fake_cluster.requests.of("Metadata", node_id=0) == []
    with pytest.raises(ValueError, match="Metdata"):
        fake_cluster.requests.of("Metdata")


async def test_wait_for_returns_once_the_requests_came(fake_cluster: FakeCluster) -> None:
    async def later() -> None:
        async with KafkaClient(fake_cluster.bootstrap) as client:
            await client.cluster.refresh_metadata()

    task = asyncio.create_task(later())
    (first, *_) = await fake_cluster.requests.wait_for("Metadata")
    assert first.api_key == 3
    await task
    with pytest.raises(TimeoutError, match="0 Fetch request"):
        await fake_cluster.requests.wait_for("Fetch", timeout=0.01)


async def test_a_stopped_broker_comes_back_on_its_port_and_leaders_move(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t", partitions=3, replication_factor=2)
    leaders = {p: fake_cluster.leader("t", p) for p in range(3)}
    address = fake_cluster.address(1)
    await fake_cluster.stop_broker(1)
    host, port = address.split(":")
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection(host, int(port))
    for p, (leader, epoch) in leaders.items():
        now = fake_cluster.leader("t", p)
        assert now == ((leader, epoch) if leader != 1 else (now[0], epoch + 1))
        assert now[0] != 1
    async with Wire(fake_cluster) as wire:
        metadata = await wire.send(metadata_v12.MetadataRequest(topics=None))
    assert [b.node_id for b in metadata.brokers] == [0, 2]
    (topic,) = metadata.topics
    assert all(1 not in p.isr_nodes for p in topic.partitions)
    await fake_cluster.start_broker(1)
    assert fake_cluster.address(1) == address
    async with Wire(fake_cluster, node_id=1) as wire:
        metadata = await wire.send(metadata_v12.MetadataRequest(topics=None))
    assert [b.node_id for b in metadata.brokers] == [0, 1, 2]


async def test_a_partition_without_a_running_replica_has_no_leader() -> None:
    async with FakeCluster(2) as cluster:
        cluster.create_topic("t", replication_factor=1)
        (leader, epoch) = cluster.leader("t", 0)
        await cluster.stop_broker(leader)
        assert cluster.leader("t", 0) == (-1, epoch + 1)
        async with Wire(cluster, node_id=1 - leader) as wire:
            metadata = await wire.send(
                metadata_v12.MetadataRequest(topics=(metadata_v12.MetadataRequestTopic(name="t"),))
            )
        (partition,) = metadata.topics[0].partitions
        assert (partition.error_code, partition.leader_id) == (Error.LEADER_NOT_AVAILABLE, -1)
        assert partition.offline_replicas == (leader,)
        await cluster.start_broker(leader)
        assert cluster.leader("t", 0) == (leader, epoch + 2)


async def test_cut_connections_closes_them_and_clients_reconnect(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    async with KafkaClient(fake_cluster.bootstrap) as client:
        await client.produce("t", 0, [b"a"])
        async with Wire(fake_cluster) as wire:
            await fake_cluster.cut_connections()
            assert await wire.closed()
        await client.produce("t", 0, [b"b"])
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"a", b"b"]


async def test_every_api_answers_a_default_request_at_every_version_served(
    fake_cluster: FakeCluster,
) -> None:
    """No handler fails on a version's own defaults (fields a version lacks, empty lists)."""
    fake_cluster.create_topic("t")
    async with Wire(fake_cluster) as wire:
        for api_key, versions in sorted(fake_cluster.served.items()):
            for version in versions:
                request = request_type(api_key, version)()
                if api_key == 0:  # acks=0 by default: nothing would come back
                    request = dataclasses.replace(request, acks=1)
                response = await wire.send(request)
                assert type(response).__version__ == version
