"""The seam between the fake cluster and its group coordinator, on the wire: who asked (client
id and host), which node answers (ListGroups, NOT_COORDINATOR), the cluster's clock driving
group sessions, the topics the groups see, and a held request when the cluster closes."""

from __future__ import annotations

import asyncio

from kafkawire.errors import MemberIdRequiredError
from kafkawire.messages.describe_groups import v5 as describe_v5
from kafkawire.messages.list_groups import v4 as list_v4
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.testing.fake import FakeCluster, ManualClock
from tests.fake_groups.harness import commit, join, sync

from .wire import Wire


async def _join_alone(wire: Wire, *, session_ms: int = 10_000) -> tuple[str, int]:
    """A member joins group "g" by itself and syncs; its id and generation."""
    required = await wire.send(join(session_ms=session_ms))
    assert required.error_code == MemberIdRequiredError.code
    joined = await wire.send(join(required.member_id, session_ms=session_ms))
    assert joined.error_code == 0
    synced = await wire.send(sync(joined.member_id, joined.generation_id))
    assert synced.error_code == 0
    return joined.member_id, joined.generation_id


async def _describe(wire: Wire) -> describe_v5.DescribedGroup:
    described = await wire.send(describe_v5.DescribeGroupsRequest(groups=("g",)))
    (group,) = described.groups
    return group


async def test_members_are_named_after_the_client_id_and_host(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    async with Wire(fake_cluster, fake_cluster.state.coordinator_for("g")) as wire:
        member_id, _ = await _join_alone(wire)
        group = await _describe(wire)
    assert member_id.startswith("wire-")  # the request header's client id, then a UUID
    ((described),) = group.members
    assert (described.member_id, described.client_id, described.client_host) == (
        member_id,
        "wire",
        "/127.0.0.1",  # Java's InetAddress.toString(), as Kafka shows it
    )


async def test_list_groups_lists_the_groups_of_the_node_asked(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    groups = [f"group-{i}" for i in range(12)]
    by_node: dict[int, set[str]] = {node: set() for node in range(3)}
    for group in groups:
        node = fake_cluster.state.coordinator_for(group)
        by_node[node].add(group)
        async with Wire(fake_cluster, node) as wire:
            answer = await wire.send(commit({("t", 0): 1}, group=group))
            assert answer.topics[0].partitions[0].error_code == 0
    assert all(by_node.values())  # the twelve groups land on every node
    for node, expected in by_node.items():
        async with Wire(fake_cluster, node) as wire:
            listed = await wire.send(list_v4.ListGroupsRequest())
        assert {g.group_id for g in listed.groups} == expected


async def test_the_cluster_clock_expires_a_session_when_the_test_moves_it() -> None:
    clock = ManualClock()
    async with FakeCluster(clock=clock) as cluster:
        cluster.create_topic("t")
        async with Wire(cluster, cluster.state.coordinator_for("g")) as wire:
            await _join_alone(wire, session_ms=6000)
            clock.advance(5.999)
            assert (await _describe(wire)).group_state == "Stable"
            clock.advance(0.001)
            expired = await _describe(wire)
    assert (expired.group_state, expired.members) == ("Empty", ())


async def test_groups_do_not_see_internal_topics(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("__consumer_offsets", 3)
    fake_cluster.create_topic("t")
    assert set(fake_cluster.state.topics()) == {"t"}
    request = metadata_v12.MetadataRequest(topics=None)
    async with Wire(fake_cluster) as wire:
        answer = await wire.send(request)
    assert {t.name: t.is_internal for t in answer.topics} == {
        "__consumer_offsets": True,
        "t": False,
    }


async def test_a_join_held_when_the_cluster_closes_does_not_hold_up_the_close() -> None:
    """A JoinGroup waiting out the initial rebalance delay when the cluster closes: the
    coordinator answers it NOT_COORDINATOR as it closes (too late for this connection, which
    its broker cuts), and nothing is left waiting."""
    async with FakeCluster(group_initial_rebalance_delay_ms=60_000) as cluster:
        cluster.create_topic("t")
        async with Wire(cluster, cluster.state.coordinator_for("g")) as wire:
            required = await wire.send(join())
            wire.write(join(required.member_id))
            await cluster.requests.wait_for("JoinGroup", count=2)
            await asyncio.wait_for(cluster.close(), 5)
            assert await wire.closed()
