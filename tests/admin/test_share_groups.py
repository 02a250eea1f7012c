"""The admin client's share-group calls end to end on the fake cluster: describing share groups,
listing groups by type, listing, altering and deleting start offsets, and the group configs a
share group reads."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kafkawire.admin import Admin, ConfigResource, ShareGroupDescription, SharePartitionOffset
from kafkawire.admin.configs import ConfigSource
from kafkawire.cluster import TopicPartition
from kafkawire.errors import GroupIdNotFoundError, InvalidConfigError, NonEmptyGroupError
from kafkawire.testing.fake import FakeCluster
from tests.fake.wire import Wire
from tests.fake_share.share import ACCEPT, GROUP, acknowledge, acquired, fetch, heartbeat

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    async with FakeCluster() as cluster:
        cluster.create_topic("t", partitions=2)
        for p in (0, 1):
            cluster.move_leader("t", p, 0)
        yield cluster


async def _join(cluster: FakeCluster, member: str, epoch: int = 0) -> int:
    async with Wire(cluster, cluster.state.coordinator_for(GROUP)) as wire:
        answer = await wire.send(heartbeat(member, epoch))
    assert answer.error_code == 0
    return answer.member_epoch


async def test_share_groups_are_described_and_listed_by_type(cluster: FakeCluster) -> None:
    await _join(cluster, "member-1")
    async with Admin(cluster.bootstrap) as admin:
        described = await admin.describe_share_groups([GROUP, "nobody"])
        assert described[GROUP] == ShareGroupDescription(
            group_id=GROUP,
            state="Stable",
            group_epoch=1,
            assignment_epoch=1,
            assignor="simple",
            members=described[GROUP].members,
        )
        (member,) = described[GROUP].members
        assert (member.member_id, member.member_epoch, member.topics, member.assignment) == (
            "member-1",
            1,
            ("t",),
            (T0, T1),
        )
        with pytest.raises(GroupIdNotFoundError):
            described["nobody"]
        shares = await admin.list_groups(types=["share"])
        assert [(g.group_id, g.type, g.state) for g in shares] == [(GROUP, "share", "Stable")]
        assert await admin.list_groups(types=["consumer"]) == []


async def test_start_offsets_follow_what_the_group_acknowledged(cluster: FakeCluster) -> None:
    topic = cluster.topic_id("t")
    cluster.create_topic("unread")
    await _join(cluster, "member-1")
    async with Admin(cluster.bootstrap) as admin:
        await admin.incremental_alter_configs(
            {ConfigResource.group(GROUP): {"share.auto.offset.reset": "earliest"}}
        )
        cluster.produce("t", 0, [b"a", b"b", b"c"])
        async with Wire(cluster, 0) as wire:
            taken = await wire.send(fetch(topic, 0, [0, 1]))
            assert acquired(taken) == {0: [(0, 2, 1)]}
            await wire.send(acknowledge(topic, 1, {0: [(0, 0, [ACCEPT])]}))
        everything = await admin.list_share_group_offsets(GROUP)
        # Partition 1 was read too, and holds nothing: it starts at its end.
        assert everything[T0] == SharePartitionOffset(start_offset=1, leader_epoch=1, lag=2)
        assert everything[T1] == SharePartitionOffset(start_offset=0, leader_epoch=1, lag=0)
        unread = TopicPartition("unread", 0)
        asked = await admin.list_share_group_offsets(GROUP, [unread])
        assert asked[unread] == SharePartitionOffset(start_offset=-1, leader_epoch=None, lag=None)
        with pytest.raises(GroupIdNotFoundError):
            await admin.list_share_group_offsets("nobody")


async def test_start_offsets_are_altered_and_deleted_in_an_empty_group(
    cluster: FakeCluster,
) -> None:
    topic = cluster.topic_id("t")
    cluster.produce("t", 0, [b"a", b"b", b"c"])
    await _join(cluster, "member-1")
    async with Admin(cluster.bootstrap) as admin:
        with pytest.raises(NonEmptyGroupError):
            await admin.alter_share_group_offsets(GROUP, {T0: 1})
        await _join(cluster, "member-1", epoch=-1)
        altered = await admin.alter_share_group_offsets(GROUP, {T0: 1, TopicPartition("t", 7): 0})
        assert altered[T0] is None
        assert list(altered.errors) == [TopicPartition("t", 7)]
        async with Wire(cluster, 0) as wire:
            assert acquired(await wire.send(fetch(topic, 0))) == {0: [(1, 2, 1)]}
            await wire.send(acknowledge(topic, -1, {0: []}))
        deleted = await admin.delete_share_group_offsets(GROUP, ["t", "nope"])
        assert deleted["t"] is None
        assert list(deleted.errors) == ["nope"]
        assert T0 not in await admin.list_share_group_offsets(GROUP)
        with pytest.raises(GroupIdNotFoundError):
            await admin.delete_share_group_offsets("nobody", ["t"])


async def test_group_configs_are_described_and_checked(cluster: FakeCluster) -> None:
    resource = ConfigResource.group(GROUP)
    async with Admin(cluster.bootstrap) as admin:
        await admin.incremental_alter_configs(
            {resource: {"share.record.lock.duration.ms": "20000"}}
        )
        configs = (await admin.describe_configs([resource]))[resource]
        lock = configs["share.record.lock.duration.ms"]
        assert (lock.value, lock.source) == ("20000", ConfigSource.GROUP_CONFIG)
        reset = configs["share.auto.offset.reset"]
        assert (reset.value, reset.source) == ("latest", ConfigSource.DEFAULT_CONFIG)
        refused = await admin.incremental_alter_configs(
            {resource: {"share.record.lock.duration.ms": "1"}}
        )
        with pytest.raises(InvalidConfigError):
            refused[resource]
    async with Wire(cluster, 0) as wire:
        answer = await wire.send(fetch(cluster.topic_id("t"), 0))
        assert answer.acquisition_lock_timeout_ms == 20000
