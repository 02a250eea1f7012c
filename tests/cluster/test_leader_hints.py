"""Leader hints (KIP-951) taken into the metadata without a refresh: Java's
``Metadata.updatePartitionLeadership`` rules, on a snapshot (no I/O)."""

from __future__ import annotations

import uuid

from kafkawire.cluster import BrokerAddress, ClusterMetadata, TopicPartition
from kafkawire.cluster.metadata import PartitionMetadata, TopicMetadata

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def snapshot() -> ClusterMetadata:
    partitions = {
        p: PartitionMetadata(
            p, leader_id=1, leader_epoch=5, replicas=(1, 2), isr=(1, 2), error_code=0
        )
        for p in (0, 1)
    }
    return ClusterMetadata(
        brokers={n: BrokerAddress(n, "127.0.0.1", 9000 + n) for n in (1, 2)},
        topics={"t": TopicMetadata("t", uuid.uuid4(), 0, partitions)},
        controller_id=1,
        cluster_id="c",
        fetched_at=12.5,
    )


def test_a_newer_leader_of_a_known_broker_is_taken_for_that_partition_only() -> None:
    before = snapshot()
    after, moved = before.with_leaders({T0: (2, 6)}, [])
    assert moved == {T0}
    assert (after.leader_for("t", 0), after.leader_epoch("t", 0)) == (2, 6)
    assert (after.leader_for("t", 1), after.leader_epoch("t", 1)) == (1, 5)
    assert after.fetched_at == before.fetched_at  # it still ages
    assert before.leader_for("t", 0) == 1  # a new snapshot; the old one stands


def test_a_hint_not_newer_than_the_metadata_is_ignored() -> None:
    before = snapshot()
    for epoch in (5, 4, -1):
        after, moved = before.with_leaders({T0: (2, epoch)}, [])
        assert (after, moved) == (before, set())


def test_a_new_broker_comes_from_the_answers_endpoints() -> None:
    before = snapshot()
    after, moved = before.with_leaders({T1: (3, 6)}, [BrokerAddress(3, "127.0.0.1", 9003)])
    assert moved == {T1}
    assert after.brokers[3] == BrokerAddress(3, "127.0.0.1", 9003)
    assert after.leader_for("t", 1) == 3


def test_an_unknown_broker_or_partition_is_ignored_and_known_addresses_stay() -> None:
    before = snapshot()
    assert before.with_leaders({T0: (7, 6)}, [])[1] == set()  # no address for node 7
    unknown = {TopicPartition("t", 9): (2, 6), TopicPartition("u", 0): (2, 6)}
    assert before.with_leaders(unknown, [])[1] == set()
    moved_broker = BrokerAddress(2, "10.0.0.9", 1)
    after, _ = before.with_leaders({T0: (2, 6)}, [moved_broker])
    assert after.brokers[2] == before.brokers[2]  # a refresh, not a hint, moves a broker
