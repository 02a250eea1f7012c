"""Committing offsets and reading them back (OffsetCommit, OffsetFetch), for one group.

Commits carry the member's generation and id (a simple consumer with manual assignment sends
generation -1 and no member id, which brokers accept for a group with no members). Requests
are built at OffsetCommit v9 and OffsetFetch v7 and negotiated down: later versions name
topics by id (OffsetCommit v10) or batch groups (OffsetFetch v8+), which one group with topic
names does not need.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import error_for_code
from kafkawire.messages.offset_commit import v9 as offset_commit
from kafkawire.messages.offset_fetch import v7 as offset_fetch

__all__ = ["Generation", "OffsetAndMetadata", "OffsetStore"]


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """A committed offset: the next record to read, with a note of the committer's choosing."""

    offset: int
    metadata: str = ""
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class Generation:
    """Who commits: the group generation and member id (``-1`` and ``""`` outside a group)."""

    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


class OffsetStore:
    """The committed offsets of one group."""

    def __init__(self, cluster: Cluster, group_id: str) -> None:
        self._cluster = cluster
        self.group_id = group_id

    async def commit(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata], generation: Generation
    ) -> None:
        """Commit ``offsets``; the first partition's error is raised (a stale generation is
        ``IllegalGenerationError``, a member the group forgot ``UnknownMemberIdError``)."""
        if not offsets:
            return
        topics: dict[str, list[offset_commit.OffsetCommitRequestPartition]] = {}
        for tp, value in sorted(offsets.items()):
            topics.setdefault(tp.topic, []).append(
                offset_commit.OffsetCommitRequestPartition(
                    partition_index=tp.partition,
                    committed_offset=value.offset,
                    committed_leader_epoch=value.leader_epoch,
                    committed_metadata=value.metadata,
                )
            )
        request = offset_commit.OffsetCommitRequest(
            group_id=self.group_id,
            generation_id_or_member_epoch=generation.generation_id,
            member_id=generation.member_id,
            group_instance_id=generation.group_instance_id,
            topics=tuple(
                offset_commit.OffsetCommitRequestTopic(name=name, partitions=tuple(parts))
                for name, parts in topics.items()
            ),
        )
        response = await self._cluster.send(request, negotiate=True, max_version=9)
        for topic in response.topics:
            for p in topic.partitions:
                error = error_for_code(p.error_code, f"commit of {topic.name}/{p.partition_index}")
                if error is not None:
                    raise error

    async def committed(
        self, partitions: Collection[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The committed offset of each of ``partitions`` (``None`` where there is none)."""
        topics: dict[str, list[int]] = {}
        for tp in sorted(partitions):
            topics.setdefault(tp.topic, []).append(tp.partition)
        request = offset_fetch.OffsetFetchRequest(
            group_id=self.group_id,
            topics=tuple(
                offset_fetch.OffsetFetchRequestTopic(name=name, partition_indexes=tuple(ps))
                for name, ps in topics.items()
            ),
        )
        response = await self._cluster.send(request, negotiate=True, max_version=7)
        error = error_for_code(getattr(response, "error_code", 0), f"offsets of {self.group_id}")
        if error is not None:
            raise error
        found: dict[TopicPartition, OffsetAndMetadata | None] = dict.fromkeys(partitions)
        for topic in response.topics:
            for p in topic.partitions:
                tp = TopicPartition(topic.name, p.partition_index)
                error = error_for_code(
                    p.error_code, f"committed offset of {tp.topic}/{tp.partition}"
                )
                if error is not None:
                    raise error
                if p.committed_offset >= 0:
                    found[tp] = OffsetAndMetadata(
                        p.committed_offset,
                        p.metadata or "",
                        getattr(p, "committed_leader_epoch", -1),
                    )
        return found
