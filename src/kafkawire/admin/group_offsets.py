"""A consumer group's committed offsets: list, alter, delete, reset, and the lag they leave.

Committed offsets live on the group's coordinator; the requests (OffsetFetch in the shape the
coordinator's version takes, OffsetCommit from outside the group, OffsetDelete) are
:mod:`kafkawire.operations.group_offsets`'s, shared with the consumer.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.cluster import TopicPartition
from kafkawire.errors import (
    KafkawireError,
    ProtocolError,
    UnknownTopicOrPartitionError,
    raise_for_code,
)
from kafkawire.operations.group_offsets import (
    OffsetAndMetadata,
    commit_offsets,
    committed_offsets,
    delete_committed_offsets,
)

from .offsets import EARLIEST, LATEST, OffsetsMixin
from .results import ItemResults

__all__ = ["CommittedOffset", "GroupOffsetsMixin", "PartitionLag", "ResetTo"]

CommittedOffset = OffsetAndMetadata
"""A group's committed offset (-1: nothing committed), its metadata ("" where none) and the
leader epoch committed with it: the one committed-offset type, which the consumer calls
``OffsetAndMetadata``."""


@dataclass(frozen=True, slots=True)
class PartitionLag:
    """How far a group's committed offset is behind a partition's end."""

    committed: int
    """-1: nothing committed."""
    end: int
    """The partition's end offset (its high watermark)."""
    lag: int | None
    """Records between the two; None when nothing is committed."""


class _Reset(enum.Enum):
    EARLIEST = "earliest"
    LATEST = "latest"
    DATETIME = "datetime"
    SHIFT = "shift"
    OFFSET = "offset"


@dataclass(frozen=True, slots=True)
class ResetTo:
    """Where :meth:`GroupOffsetsMixin.reset_offsets` moves a group's offsets to."""

    how: _Reset
    value: int = 0

    @classmethod
    def earliest(cls) -> ResetTo:
        """Each partition's first offset (its log start)."""
        return cls(_Reset.EARLIEST)

    @classmethod
    def latest(cls) -> ResetTo:
        """Each partition's end offset (after its last record)."""
        return cls(_Reset.LATEST)

    @classmethod
    def datetime(cls, timestamp_ms: int) -> ResetTo:
        """The first offset at or after ``timestamp_ms`` (the end if there is none)."""
        return cls(_Reset.DATETIME, timestamp_ms)

    @classmethod
    def shift_by(cls, n: int) -> ResetTo:
        """The committed offset moved by ``n`` (kept within the partition's offsets)."""
        return cls(_Reset.SHIFT, n)

    @classmethod
    def offset(cls, offset: int) -> ResetTo:
        """``offset`` (kept within the partition's offsets)."""
        return cls(_Reset.OFFSET, offset)


class GroupOffsetsMixin(OffsetsMixin):
    async def list_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> ItemResults[TopicPartition, CommittedOffset]:
        """The offsets ``group_id`` committed: for ``partitions``, or every partition it has
        committed for (``None``)."""
        wanted = None if partitions is None else [TopicPartition(*tp) for tp in partitions]
        found = await committed_offsets(self._cluster, group_id, wanted)
        results: dict[TopicPartition, CommittedOffset | KafkawireError] = dict(found)
        for tp in wanted or ():
            results.setdefault(
                tp,
                ProtocolError(
                    f"OffsetFetch of group {group_id!r} did not answer {tp.topic}/{tp.partition}"
                ),
            )
        return ItemResults(results)

    async def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> ItemResults[TopicPartition, None]:
        """Commit ``offsets`` for ``group_id`` as an admin: the group must have no members."""
        wanted = {TopicPartition(*tp): OffsetAndMetadata(offset) for tp, offset in offsets.items()}
        return ItemResults(await commit_offsets(self._cluster, group_id, wanted))

    async def delete_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition]
    ) -> ItemResults[TopicPartition, None]:
        """Forget ``group_id``'s committed offsets of ``partitions`` (OffsetDelete; the group
        must not be subscribed to their topics)."""
        wanted = [TopicPartition(*tp) for tp in partitions]
        return ItemResults(await delete_committed_offsets(self._cluster, group_id, wanted))

    async def group_lag(self, group_id: str) -> ItemResults[TopicPartition, PartitionLag]:
        """For each partition ``group_id`` has committed for: that offset, the end, the lag."""
        committed = await self.list_group_offsets(group_id)
        ends = await self.list_offsets(dict.fromkeys(committed.succeeded, LATEST))
        results: dict[TopicPartition, PartitionLag | KafkawireError] = dict(committed.errors)
        for tp, mine in committed.succeeded.items():
            end = ends.outcome(tp)
            if isinstance(end, KafkawireError):
                results[tp] = end
                continue
            lag = max(0, end.offset - mine.offset) if mine.offset >= 0 else None
            results[tp] = PartitionLag(mine.offset, end.offset, lag)
        return ItemResults(results)

    async def reset_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition | str] | None,
        to: ResetTo,
        *,
        dry_run: bool = False,
    ) -> ItemResults[TopicPartition, int]:
        """Move ``group_id``'s offsets of ``partitions`` (topic names mean all their
        partitions; ``None``: every partition it has committed for) as ``to`` says; each
        partition's new offset. With ``dry_run`` nothing is committed."""
        named = None if partitions is None else await self._partitions_of(partitions)
        committed = await self.list_group_offsets(group_id, named)
        targets = list(committed) if named is None else named
        earliest = await self.list_offsets(dict.fromkeys(targets, EARLIEST))
        latest = await self.list_offsets(dict.fromkeys(targets, LATEST))
        by_time = None
        if to.how is _Reset.DATETIME:
            by_time = await self.list_offsets(dict.fromkeys(targets, to.value))
        moved: dict[TopicPartition, int | KafkawireError] = {}
        for tp in targets:
            try:
                low, high = earliest[tp].offset, latest[tp].offset
                moved[tp] = _target(to, tp, (low, high), committed, by_time)
            except KafkawireError as error:
                moved[tp] = error
        chosen = {tp: o for tp, o in moved.items() if not isinstance(o, KafkawireError)}
        if chosen and not dry_run:
            moved.update((await self.alter_group_offsets(group_id, chosen)).errors)
        return ItemResults(moved)

    async def _partitions_of(
        self, partitions: Iterable[TopicPartition | str]
    ) -> list[TopicPartition]:
        """Partitions named, with each topic named alone standing for all its partitions."""
        named = list(partitions)
        topics = [p for p in named if isinstance(p, str)]
        found = [TopicPartition(*p) for p in named if not isinstance(p, str)]
        if topics:
            metadata = await self._cluster.metadata(topics)
            for topic in topics:
                # A misspelt topic is an error, not a topic with no partitions to reset
                info = metadata.topics.get(topic)
                if info is None:
                    raise UnknownTopicOrPartitionError(f"topic {topic}")
                raise_for_code(info.error_code, f"topic {topic}")
                found += [TopicPartition(topic, p) for p in sorted(info.partitions)]
        return found


def _target(
    to: ResetTo,
    tp: TopicPartition,
    bounds: tuple[int, int],
    committed: ItemResults[TopicPartition, CommittedOffset],
    by_time: ItemResults[TopicPartition, Any] | None,
) -> int:
    """Where ``to`` puts partition ``tp``, whose offsets run from ``bounds`` (low, high)."""
    low, high = bounds
    if to.how is _Reset.EARLIEST:
        return low
    if to.how is _Reset.LATEST:
        return high
    if by_time is not None:
        found = by_time[tp].offset
        return high if found < 0 else found
    if to.how is _Reset.SHIFT:
        mine = committed.outcome(tp)
        if isinstance(mine, KafkawireError) or mine.offset < 0:
            raise KafkawireError(f"{tp.topic}/{tp.partition} has no committed offset to shift")
        return min(high, max(low, mine.offset + to.value))
    return min(high, max(low, to.value))
