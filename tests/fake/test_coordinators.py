"""FindCoordinator and the seam to the group coordinator: which node coordinates what, and
how group requests reach the coordinator plugged in."""

from __future__ import annotations

from kafkawire.messages.find_coordinator import v0 as find_v0
from kafkawire.messages.find_coordinator import v3 as find_v3
from kafkawire.messages.find_coordinator import v6 as find_v6
from kafkawire.messages.heartbeat import v2 as heartbeat_v2
from kafkawire.messages.heartbeat import v4 as heartbeat_v4
from kafkawire.testing.fake import Error, FakeCluster
from kafkawire.testing.fake.state import java_hash

from .wire import Wire


def test_ids_hash_as_javas_string_hash_code() -> None:
    # The values Java 17's String.hashCode() printed for these strings.
    assert java_hash("") == 0
    assert java_hash("group") == 98629247
    assert java_hash("a-much-longer-transactional-id") == 749674287
    assert java_hash("\u00fc\u20ac\U0001f600") == 17318035  # UTF-16 units, a surrogate pair


async def test_find_coordinator_single_and_batched(fake_cluster: FakeCluster) -> None:
    group_node = fake_cluster.state.coordinator_for("g")
    txn_node = fake_cluster.state.coordinator_for("t")
    async with Wire(fake_cluster) as wire:
        old = await wire.send(find_v0.FindCoordinatorRequest(key="g"))
        txn = await wire.send(find_v3.FindCoordinatorRequest(key="t", key_type=1))
        empty_txn = await wire.send(find_v3.FindCoordinatorRequest(key="", key_type=1))
        other = await wire.send(find_v3.FindCoordinatorRequest(key="x", key_type=7))
        batched = await wire.send(
            find_v6.FindCoordinatorRequest(key_type=0, coordinator_keys=("g", "h"))
        )
    assert (old.error_code, old.node_id) == (0, group_node)
    assert f"{old.host}:{old.port}" == fake_cluster.address(group_node)
    assert (txn.error_code, txn.node_id) == (0, txn_node)
    assert empty_txn.error_code == other.error_code == Error.INVALID_REQUEST
    assert [(c.key, c.node_id) for c in batched.coordinators] == [
        ("g", group_node),
        ("h", fake_cluster.state.coordinator_for("h")),
    ]


async def test_a_stopped_coordinator_moves_to_a_running_broker(fake_cluster: FakeCluster) -> None:
    node = fake_cluster.state.coordinator_for("g")
    await fake_cluster.stop_broker(node)
    assert fake_cluster.state.coordinator_for("g") not in (node, -1)


async def test_group_requests_reach_the_coordinator_with_the_receiving_node() -> None:
    async with FakeCluster() as cluster:
        assert cluster.served[12] == range(5)
        node = cluster.state.coordinator_for("g")
        request = heartbeat_v4.HeartbeatRequest(group_id="g", generation_id=1, member_id="m")
        async with Wire(cluster, node) as wire:
            assert (await wire.send(request)).error_code == Error.UNKNOWN_MEMBER_ID
        async with Wire(cluster, (node + 1) % 3) as wire:
            assert (await wire.send(request)).error_code == Error.NOT_COORDINATOR


async def test_an_older_broker_is_played_by_narrowing_versions() -> None:
    async with (
        FakeCluster(1, api_versions={12: range(3)}) as cluster,
        Wire(cluster) as wire,
    ):
        old = await wire.send(
            heartbeat_v2.HeartbeatRequest(group_id="g", generation_id=1, member_id="m")
        )
        assert old.error_code == Error.UNKNOWN_MEMBER_ID
        wire.write(heartbeat_v4.HeartbeatRequest(group_id="g"))
        assert await wire.closed()
