"""ListOffsets, once for every client: offsets by time and at the ends of partitions, asked of
each leader once for all its partitions (:func:`.fanout.fan_out`).

- What to find, per partition: :data:`EARLIEST`, :data:`LATEST`, :data:`MAX_TIMESTAMP` (the
  record with the largest timestamp, v7+), or a time in ms (the first record at or after it).
- The isolation level: at read_committed (1) "latest" is the last stable offset.
- Each partition carries the leader epoch the metadata gives (v4+), so a leader that is not
  the one the metadata names answers FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH instead of
  an offset from a log that may be cut back; both are retried.
- :func:`end_offsets` confirms "latest" with the high watermark (or, at read_committed, the
  last stable offset) of a Fetch at the offset ListOffsets gave: on Kafka that Fetch returns
  no records and confirms the answer; Tansu 0.6.0 answers ListOffsets "latest" with its last
  batch's base offset + 1, and the Fetch from there returns that batch and the right high
  watermark. One extra request per leader, and correct on both (see docs/design.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import KafkawireError, error_for_code
from kafkawire.messages.list_offsets import v11 as list_offsets_latest

from .fanout import RetryPolicy, current_leader_epoch, fan_out, per_topic, retriable
from .fetch_request import FetchOptions, answered, build_fetch, topic_names

__all__ = [
    "EARLIEST",
    "LATEST",
    "LIST_OFFSETS",
    "MAX_TIMESTAMP",
    "ListedOffset",
    "end_offsets",
    "list_offsets",
]

LIST_OFFSETS = list_offsets_latest.ListOffsetsRequest.__api_key__
LATEST = -1  # ListOffsets timestamps with a special meaning
"""The timestamp that asks ListOffsets for a partition's end offset (after its last record)."""
EARLIEST = -2
"""The timestamp that asks ListOffsets for a partition's first offset (its log start)."""
MAX_TIMESTAMP = -3
"""The timestamp that asks ListOffsets for the record with the largest timestamp (v7+)."""
_CONSUMER = -1  # the replica id of a client, not a follower

# The end-offset Fetch: Tansu 0.6.0 answers a Fetch with max_wait_ms=0 with no partitions;
# at most the one batch a broker must return to make progress.
_CONFIRM = FetchOptions(max_wait_ms=1, min_bytes=1, max_bytes=1, isolation_level=0)


@dataclasses.dataclass(frozen=True, slots=True)
class ListedOffset:
    """What ListOffsets found for one partition (the consumer's ``OffsetAndTimestamp``, the
    admin's and ``KafkaClient``'s ``ListedOffset``)."""

    offset: int  # -1 when no record matches
    timestamp: int  # -1 where not known
    leader_epoch: int = -1


async def list_offsets(
    cluster: Cluster,
    specs: Mapping[TopicPartition, int],
    *,
    isolation_level: int = 0,
    retry: RetryPolicy | None = retriable,
) -> dict[TopicPartition, ListedOffset | KafkawireError]:
    """What each partition of ``specs`` (partition -> timestamp or special value) answers."""

    m = list_offsets_latest

    def partition(tp: TopicPartition, timestamp: int) -> Any:
        return m.ListOffsetsPartition(
            partition_index=tp.partition,
            current_leader_epoch=current_leader_epoch(cluster, tp),
            timestamp=timestamp,
        )

    async def build(leader: int, share: dict[TopicPartition, int]) -> Any:
        return m.ListOffsetsRequest(
            replica_id=_CONSUMER,
            isolation_level=isolation_level,
            topics=per_topic(
                share, lambda name, ps: m.ListOffsetsTopic(name=name, partitions=ps), partition
            ),
        )

    return await fan_out(cluster, specs, build, _listed, what="ListOffsets", retry=retry)


async def end_offsets(
    cluster: Cluster,
    partitions: Collection[TopicPartition],
    *,
    isolation_level: int = 0,
    retry: RetryPolicy | None = retriable,
) -> dict[TopicPartition, int | KafkawireError]:
    """Each partition's end: the offset of its next record (at read_committed, its last
    stable offset), from ListOffsets "latest" confirmed by a Fetch there."""
    listed = await list_offsets(
        cluster, dict.fromkeys(partitions, LATEST), isolation_level=isolation_level, retry=retry
    )
    found = {tp: a.offset for tp, a in listed.items() if isinstance(a, ListedOffset)}
    failed = {tp: a for tp, a in listed.items() if isinstance(a, KafkawireError)}
    options = dataclasses.replace(_CONFIRM, isolation_level=isolation_level)

    async def build(leader: int, share: dict[TopicPartition, int]) -> Any:
        plan = await build_fetch(cluster, leader, share, options, partition_max_bytes=1)
        return plan.request

    def read(response: Any, share: dict[TopicPartition, int]) -> dict[TopicPartition, Any]:
        names = topic_names(cluster.current_metadata, share)
        ends: dict[TopicPartition, Any] = {}
        for topic, data in answered(response, names):
            tp = TopicPartition(topic, data.partition_index)
            lso = getattr(data, "last_stable_offset", -1)
            ends[tp] = error_for_code(data.error_code, f"{topic}/{tp.partition}") or (
                lso if isolation_level and lso >= 0 else data.high_watermark
            )
        return ends

    # Built at the version the leader takes for these topics (by name up to v12, by id
    # after): not negotiated, which could move it to a version naming topics otherwise.
    confirmed: dict[TopicPartition, int | KafkawireError] = await fan_out(
        cluster, found, build, read, what="end offsets", retry=retry, negotiate=False
    )
    return {tp: failed[tp] if tp in failed else confirmed[tp] for tp in listed}


def _listed(response: Any, share: dict[TopicPartition, int]) -> dict[TopicPartition, Any]:
    """Each partition's ListedOffset or error, from a ListOffsetsResponse of any version."""
    found: dict[TopicPartition, Any] = {}
    for topic in response.topics:
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            found[tp] = error_for_code(p.error_code, f"{tp.topic}/{tp.partition}") or _offset(p)
    return found


def _offset(answer: Any) -> ListedOffset:
    if hasattr(answer, "old_style_offsets"):  # v0: a list of offsets, newest first
        offsets = answer.old_style_offsets
        return ListedOffset(offsets[0] if offsets else -1, -1, -1)
    return ListedOffset(answer.offset, answer.timestamp, getattr(answer, "leader_epoch", -1))
