"""Offsets by time and at the ends of partitions, asked of each leader once for all its
partitions.

End offsets come from a Fetch's high watermark (or, at read_committed, its last stable
offset), at the offset ListOffsets gave: on Kafka that Fetch returns no records and confirms
the answer; Tansu 0.6.0 answers ListOffsets "latest" with its last batch's base offset + 1,
and the Fetch from there returns that batch and the right high watermark. One extra request
per leader, and correct on both (see docs/design.md).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import ProtocolError, error_for_code
from kafkawire.messages.list_offsets import v11 as list_offsets

from .fetch_request import FetchOptions, answered, build_fetch

__all__ = ["EARLIEST", "LATEST", "OffsetAndTimestamp", "OffsetLookup"]

LATEST, EARLIEST = -1, -2  # ListOffsets timestamps with a special meaning
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class OffsetAndTimestamp:
    """What ``offsets_for_times`` finds: the first offset at or after the time asked."""

    offset: int
    timestamp: int
    leader_epoch: int = -1


class OffsetLookup:
    """ListOffsets (and the end-offset Fetch) for many partitions, one request per leader."""

    def __init__(self, cluster: Cluster, *, read_committed: bool) -> None:
        self._cluster = cluster
        self._isolation = 1 if read_committed else 0

    async def beginning(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        found = await self._list(dict.fromkeys(partitions, EARLIEST))
        return {tp: answer.offset for tp, answer in found.items()}

    async def end(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        listed = await self._list(dict.fromkeys(partitions, LATEST))
        return await self._per_leader(
            {tp: answer.offset for tp, answer in listed.items()}, self._confirm_end
        )

    async def for_times(
        self, timestamps: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        found = await self._list(dict(timestamps))
        return {tp: (a if a.offset >= 0 else None) for tp, a in found.items()}

    async def _list(self, wanted: Mapping[TopicPartition, int]) -> dict[TopicPartition, Any]:
        return await self._per_leader(wanted, self._list_from)

    async def _per_leader(
        self,
        wanted: Mapping[TopicPartition, int],
        ask: Callable[[int, dict[TopicPartition, int]], Awaitable[dict[TopicPartition, T]]],
    ) -> dict[TopicPartition, T]:
        """``ask(leader, its share of wanted)`` for every leader at once, in one call that
        retries what may succeed (a moved leader: metadata again, and a new split)."""

        async def attempt() -> dict[TopicPartition, T]:
            metadata = await self._cluster.metadata({tp.topic for tp in wanted})
            by_leader: dict[int, dict[TopicPartition, int]] = defaultdict(dict)
            for tp, value in wanted.items():
                by_leader[metadata.leader_for(tp.topic, tp.partition)][tp] = value
            results = await asyncio.gather(*(ask(n, share) for n, share in by_leader.items()))
            return {tp: v for result in results for tp, v in result.items()}

        return await self._cluster.call(
            "list offsets",
            attempt,
            forget=lambda error: self._cluster.mark_metadata_stale(),
        )

    async def _list_from(
        self, leader: int, wanted: dict[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp]:
        metadata = self._cluster.current_metadata  # just read by _per_leader
        topics: dict[str, list[Any]] = defaultdict(list)
        for tp, timestamp in wanted.items():
            topics[tp.topic].append(
                list_offsets.ListOffsetsPartition(
                    partition_index=tp.partition,
                    # v4+: a leader whose epoch differs answers FENCED_LEADER_EPOCH or
                    # UNKNOWN_LEADER_EPOCH (retried, the former with fresh metadata)
                    current_leader_epoch=(
                        metadata.leader_epoch(tp.topic, tp.partition) if metadata else -1
                    ),
                    timestamp=timestamp,
                )
            )
        request = list_offsets.ListOffsetsRequest(
            replica_id=-1,  # a consumer, not a follower
            isolation_level=self._isolation,
            topics=tuple(
                list_offsets.ListOffsetsTopic(name=name, partitions=tuple(parts))
                for name, parts in topics.items()
            ),
        )
        response = await self._cluster.send(request, node_id=leader, negotiate=True, retry=False)
        found = {}
        for topic in response.topics:
            for p in topic.partitions:
                _raise_for(p.error_code, f"{topic.name}/{p.partition_index}")
                found[TopicPartition(topic.name, p.partition_index)] = OffsetAndTimestamp(
                    p.offset, p.timestamp, getattr(p, "leader_epoch", -1)
                )
        return found

    async def _confirm_end(
        self, leader: int, listed: dict[TopicPartition, int]
    ) -> dict[TopicPartition, int]:
        options = FetchOptions(
            max_wait_ms=1,  # Tansu 0.6.0 answers a Fetch with max_wait_ms=0 with no partitions
            min_bytes=1,
            max_bytes=1,  # at most the one batch a broker must return to make progress
            isolation_level=self._isolation,
        )
        plan = await build_fetch(self._cluster, leader, listed, options, partition_max_bytes=1)
        response = await self._cluster.send(plan.request, node_id=leader, retry=False)
        ends = {}
        for topic, data in answered(response, plan.names):
            tp = TopicPartition(topic, data.partition_index)
            _raise_for(data.error_code, f"{topic}/{data.partition_index}")
            lso = getattr(data, "last_stable_offset", -1)
            ends[tp] = lso if self._isolation and lso >= 0 else data.high_watermark
        missing = sorted(set(listed) - set(ends))
        if missing:
            raise ProtocolError(f"broker {leader} did not answer the Fetch for {missing}")
        return ends


def _raise_for(code: int, where: str) -> None:
    error = error_for_code(code, where)
    if error is not None:
        raise error
