"""The cluster layer against real brokers: Tansu and librdkafka's three-broker mock cluster."""

from __future__ import annotations

import pytest

from kafkawire.cluster import Cluster
from kafkawire.messages.list_offsets import v9 as list_offsets
from kafkawire.messages.metadata import v13 as metadata
from kafkawire.testing.pytest_plugin import Broker

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_bootstrap_and_metadata(kafka_broker: Broker) -> None:
    async with Cluster(kafka_broker.bootstrap) as cluster:
        snapshot = await cluster.metadata()
        assert snapshot.brokers
        for broker in snapshot.brokers.values():
            assert broker.host
            assert broker.port > 0


async def test_requests_reach_each_partition_leader(mock_cluster: Broker) -> None:
    async with Cluster(mock_cluster.bootstrap) as cluster:
        # The mock cluster creates topics on demand, placing each partition's leader at random:
        # all four on one broker happens 1 time in 27, so take the first topic that spreads.
        for attempt in range(10):
            topic = f"kafkawire-routing-{attempt}"
            create = metadata.MetadataRequest(
                topics=(metadata.MetadataRequestTopic(name=topic),), allow_auto_topic_creation=True
            )
            await cluster.send(create, negotiate=True)
            snapshot = await cluster.refresh_metadata([topic])
            partitions = snapshot.topics[topic].partitions
            if len({p.leader_id for p in partitions.values()}) > 1:
                break
        else:
            pytest.fail("want leaders on several brokers")
        for index in partitions:
            request = list_offsets.ListOffsetsRequest(
                topics=(
                    list_offsets.ListOffsetsTopic(
                        name=topic,
                        partitions=(
                            list_offsets.ListOffsetsPartition(partition_index=index, timestamp=-1),
                        ),
                    ),
                )
            )
            response = await cluster.send(request, negotiate=True)
            # A broker that does not lead the partition answers NOT_LEADER_OR_FOLLOWER (6).
            assert response.topics[0].partitions[0].error_code == 0
        assert len({key for key, _ in cluster._pool._connections}) >= 2
