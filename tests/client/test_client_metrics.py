"""The metrics of the low-level client and the admin client (connections and each broker's
request latencies, under Java's group prefixes), on the fake cluster: they move as requests
are answered."""

from __future__ import annotations

from kafkawire.admin import Admin
from kafkawire.client import KafkaClient
from kafkawire.testing.fake import FakeCluster


def node_groups(metrics: dict[str, dict[str, float]], prefix: str) -> list[str]:
    return [group for group in metrics if group.startswith(f"{prefix}-node-metrics,node-id=")]


async def test_the_client_counts_connections_and_each_brokers_latency(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    client = KafkaClient(fake_cluster.bootstrap)
    before = client.metrics()
    assert before["kafka-client-metrics"]["connection-creation-total"] == 0
    assert not node_groups(before, "kafka-client")
    async with client:
        await client.produce("t", 0, [b"a", b"b"])
        metrics = client.metrics()
        assert metrics["kafka-client-metrics"]["connection-count"] >= 1
    connections = metrics["kafka-client-metrics"]
    assert connections["connection-creation-total"] >= 1
    assert connections["connection-creation-rate"] > 0
    nodes = node_groups(metrics, "kafka-client")
    assert nodes
    latency = metrics[nodes[0]]
    assert latency["request-latency-max"] >= latency["request-latency-avg"] >= 0
    assert client.metrics()["kafka-client-metrics"]["connection-count"] == 0  # closed


async def test_the_admin_client_has_its_own_prefix(fake_cluster: FakeCluster) -> None:
    admin = Admin(fake_cluster.bootstrap)
    assert admin.metrics()["admin-client-metrics"]["connection-creation-total"] == 0
    async with admin:
        await admin.list_topics()
        metrics = admin.metrics()
    assert metrics["admin-client-metrics"]["connection-creation-total"] >= 1
    assert node_groups(metrics, "admin-client")
