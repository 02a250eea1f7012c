"""The consumer's offset lookups: offsets by time and at the ends of partitions, all or
nothing (the first partition's error is raised), at the consumer's isolation level.

The requests are :mod:`kafkawire.operations.list_offsets`'s, shared with the admin client and
``KafkaClient``: one per leader, partitions whose leader moved asked again, and end offsets
confirmed by a Fetch's high watermark.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TypeVar

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import KafkawireError
from kafkawire.operations.list_offsets import (
    EARLIEST,
    LATEST,
    ListedOffset,
    end_offsets,
    list_offsets,
)

__all__ = ["EARLIEST", "LATEST", "OffsetAndTimestamp", "OffsetLookup"]

T = TypeVar("T")

OffsetAndTimestamp = ListedOffset
"""What ``offsets_for_times`` finds: the first offset at or after the time asked (the one
ListOffsets result type, under the name Java's and aiokafka's consumers give it)."""


class OffsetLookup:
    """ListOffsets (and the end-offset Fetch) for many partitions, one request per leader."""

    def __init__(self, cluster: Cluster, *, read_committed: bool) -> None:
        self._cluster = cluster
        self._isolation = 1 if read_committed else 0

    async def beginning(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        found = await self._list(dict.fromkeys(partitions, EARLIEST))
        return {tp: answer.offset for tp, answer in found.items()}

    async def end(self, partitions: Collection[TopicPartition]) -> dict[TopicPartition, int]:
        return _all_or_raise(
            await end_offsets(self._cluster, partitions, isolation_level=self._isolation)
        )

    async def for_times(
        self, timestamps: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        found = await self._list(timestamps)
        return {tp: (a if a.offset >= 0 else None) for tp, a in found.items()}

    async def _list(
        self, wanted: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, ListedOffset]:
        return _all_or_raise(
            await list_offsets(self._cluster, wanted, isolation_level=self._isolation)
        )


def _all_or_raise(results: Mapping[TopicPartition, T | KafkawireError]) -> dict[TopicPartition, T]:
    """Every partition's result, or the first partition's error."""
    for result in results.values():
        if isinstance(result, KafkawireError):
            raise result
    return {tp: r for tp, r in results.items() if not isinstance(r, KafkawireError)}
