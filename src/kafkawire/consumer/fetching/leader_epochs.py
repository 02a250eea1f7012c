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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import KafkawireError, error_for_code
from kafkawire.messages.offset_for_leader_epoch import v4 as offset_for_leader_epoch
from kafkawire.net import NoCommonVersionError
from kafkawire.operations.fanout import current_leader_epoch, fan_out, per_topic

__all__ = ["EpochEnd", "can_validate", "epoch_ends"]

OFFSET_FOR_LEADER_EPOCH = offset_for_leader_epoch.OffsetForLeaderEpochRequest.__api_key__
_CONSUMER_MIN_VERSION = 3  # the first with replica_id, which a consumer sets to -1
_CONSUMER = -1


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
    cluster: Cluster, positions: Mapping[TopicPartition, int]
) -> dict[TopicPartition, EpochEnd | KafkawireError]:
    """Ask each partition's leader where the leader epoch of its position (``positions``:
    partition -> that epoch) ends, one request per leader, with the leader epoch the metadata
    gives as current (so a stale leader is fenced). Not retried here: a partition's error
    comes back as its value (some are retriable: a moved leader, a fenced or unknown leader
    epoch), for the fetcher to back off."""

    m = offset_for_leader_epoch

    def partition(tp: TopicPartition, leader_epoch: int) -> Any:
        return m.OffsetForLeaderPartition(
            partition=tp.partition,
            current_leader_epoch=current_leader_epoch(cluster, tp),
            leader_epoch=leader_epoch,
        )

    async def build(leader: int, share: dict[TopicPartition, int]) -> Any:
        return m.OffsetForLeaderEpochRequest(
            replica_id=_CONSUMER,
            topics=per_topic(
                share, lambda name, ps: m.OffsetForLeaderTopic(topic=name, partitions=ps), partition
            ),
        )

    return await fan_out(
        cluster, positions, build, _epoch_ends, what="OffsetForLeaderEpoch", retry=None
    )


def _epoch_ends(response: Any, asked: dict[TopicPartition, int]) -> dict[TopicPartition, Any]:
    found: dict[TopicPartition, Any] = {}
    for topic in response.topics:
        for p in topic.partitions:
            tp = TopicPartition(topic.topic, p.partition)
            if tp not in asked:
                continue  # not asked: nothing to apply it to
            where = f"leader epoch {asked[tp]} of {tp.topic}/{tp.partition}"
            error = error_for_code(p.error_code, where)
            found[tp] = error if error is not None else EpochEnd(p.leader_epoch, p.end_offset)
    return found
