"""``kafkawire groups`` on share groups: listing them by type, describing their members, start
offsets and lag. The fake cluster runs in a thread; the command in another (``run``,
conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkawire.testing.fake import FakeCluster, FakeClusterThread
from tests.fake.wire import Wire
from tests.fake_share.share import ACCEPT, GROUP, acknowledge, fetch, heartbeat

from .conftest import Run


def rows(out: str, first: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.split()[:1] == [first]]


@pytest.fixture
def fake() -> Iterator[FakeClusterThread]:
    def setup(cluster: FakeCluster) -> None:
        cluster.create_topic("t", partitions=2)
        for p in (0, 1):
            cluster.move_leader("t", p, 0)
        cluster.set_group_config(GROUP, "share.auto.offset.reset", "earliest")
        cluster.produce("t", 0, [b"a", b"b", b"c"])

    with FakeClusterThread(num_brokers=1) as fake:
        fake.call(setup)
        yield fake


async def test_share_groups_are_listed_and_described(run: Run, fake: FakeClusterThread) -> None:
    topic = fake.call(lambda cluster: cluster.topic_id("t"))
    async with Wire(fake.cluster, 0) as wire:
        for member in ("member-1", "member-2"):
            assert (await wire.send(heartbeat(member, 0))).error_code == 0
        assert (await wire.send(heartbeat("member-1", 1, topics=None))).member_epoch == 2
        await wire.send(fetch(topic, 0, [0, 1]))
        await wire.send(acknowledge(topic, 1, {0: [(0, 0, [ACCEPT])]}))
        bootstrap = ["-b", fake.bootstrap]
        listed = run("groups", "list", "--type", "share", *bootstrap)
        assert listed.returncode == 0, listed.stderr
        assert rows(listed.stdout, GROUP) == [[GROUP, "share", "Stable", "share"]]
        described = run("groups", "describe", GROUP, *bootstrap)
    assert described.returncode == 0, described.stderr
    assert f"Share group {GROUP}  state Stable  epoch 2  assignor simple  members 2" in (
        described.stdout
    )
    assert [
        r[0] for r in rows(described.stdout, "member-1") + rows(described.stdout, "member-2")
    ] == [
        "member-1",
        "member-2",
    ]
    # topic, partition, start, lag, the members sharing it (the simple assignor splits two
    # partitions between two members)
    partitions = rows(described.stdout, "t")
    assert [r[:4] for r in partitions] == [["t", "0", "1", "2"], ["t", "1", "0", "0"]]
    assert sorted(r[4] for r in partitions) == ["member-1", "member-2"]
