"""Checking a position against the leader's log (KIP-320), with OffsetForLeaderEpoch.

A position is an offset and the leader epoch of the record before it. When a partition's
leader changes, the new leader's log may have been cut back (records the old leader had
appended but never replicated are gone), and a consumer that goes on fetching at its offset
would skip whatever the new leader writes in their place. So, as Kafka's Java client does, the
position is checked first: the leader answers the end offset of the position's epoch in its
own log, and an end below the position means the log was truncated under it. Brokers older
than OffsetForLeaderEpoch v3 (the first a consumer may send) are not asked, nor are those
without the API (Tansu 0.6.0): there the position is taken as it is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import BrokerError, error_for_code
from kafkawire.messages.offset_for_leader_epoch import v4 as offset_for_leader_epoch
from kafkawire.net import NoCommonVersionError

__all__ = ["EpochEnd", "EpochQuery", "can_validate", "epoch_ends"]

OFFSET_FOR_LEADER_EPOCH = 23
_CONSUMER_MIN_VERSION = 3  # the first with replica_id, which a consumer sets to -1
_CONSUMER = -1


@dataclass(frozen=True, slots=True)
class EpochQuery:
    """What to ask of one partition: the end of ``leader_epoch`` (the position's), with the
    leader epoch the consumer believes current (so a stale leader is fenced)."""

    leader_epoch: int
    current_leader_epoch: int


@dataclass(frozen=True, slots=True)
class EpochEnd:
    """The leader's answer: the largest epoch at or below the one asked, and where it ends."""

    leader_epoch: int
    end_offset: int

    @property
    def undefined(self) -> bool:
        """The leader knows no such epoch (its log starts after it): nothing to compare with."""
        return self.leader_epoch < 0 or self.end_offset < 0


async def can_validate(cluster: Cluster, leader: int) -> bool:
    """Whether ``leader`` serves OffsetForLeaderEpoch at a version a consumer may send."""
    try:
        version = await cluster.versions_for(leader, OFFSET_FOR_LEADER_EPOCH)
    except NoCommonVersionError:
        return False
    return version >= _CONSUMER_MIN_VERSION


async def epoch_ends(
    cluster: Cluster, leader: int, wanted: Mapping[TopicPartition, EpochQuery]
) -> dict[TopicPartition, EpochEnd | BrokerError]:
    """Ask ``leader`` where each partition's epoch ends; a partition's error comes back as its
    value (some are retriable: a moved leader, a fenced or unknown leader epoch)."""
    topics: dict[str, list[offset_for_leader_epoch.OffsetForLeaderPartition]] = defaultdict(list)
    for tp, query in wanted.items():
        topics[tp.topic].append(
            offset_for_leader_epoch.OffsetForLeaderPartition(
                partition=tp.partition,
                current_leader_epoch=query.current_leader_epoch,
                leader_epoch=query.leader_epoch,
            )
        )
    request = offset_for_leader_epoch.OffsetForLeaderEpochRequest(
        replica_id=_CONSUMER,
        topics=tuple(
            offset_for_leader_epoch.OffsetForLeaderTopic(topic=name, partitions=tuple(parts))
            for name, parts in topics.items()
        ),
    )
    response = await cluster.send(request, node_id=leader, negotiate=True, retry=False)
    found: dict[TopicPartition, EpochEnd | BrokerError] = {}
    for topic in response.topics:
        for p in topic.partitions:
            tp = TopicPartition(topic.topic, p.partition)
            if tp not in wanted:
                continue  # not asked: nothing to apply it to
            where = f"leader epoch {wanted[tp].leader_epoch} of {tp.topic}/{tp.partition}"
            error = error_for_code(p.error_code, where)
            found[tp] = error if error is not None else EpochEnd(p.leader_epoch, p.end_offset)
    return found
