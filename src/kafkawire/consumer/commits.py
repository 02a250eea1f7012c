"""Committing offsets and reading them back (OffsetCommit, OffsetFetch), for one group.

Commits carry the member's generation and id (a simple consumer with manual assignment sends
generation -1 and no member id, which brokers accept for a group with no members); a KIP-848
member's carry its member epoch there. Requests are built at OffsetCommit v9 and OffsetFetch
v7 and negotiated down: later versions name topics by id (v10) or batch groups (OffsetFetch
v8+), which one group with topic names does not need. A KIP-848 member reads its commits at
OffsetFetch v9 where the coordinator serves it, as that version carries the member id and
epoch (the coordinator then refuses a member that is stale or gone instead of answering it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import ProtocolError, error_for_code
from kafkawire.messages.offset_commit import v9 as offset_commit
from kafkawire.messages.offset_fetch import v7 as offset_fetch
from kafkawire.messages.offset_fetch import v9 as offset_fetch_member

__all__ = ["Generation", "OffsetAndMetadata", "OffsetStore"]

_OFFSET_FETCH = 9  # the API key
_MEMBER_FETCH = 9  # the first OffsetFetch version with the member id and epoch (KIP-848)


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
        self, partitions: Collection[TopicPartition], member: Generation | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The committed offset of each of ``partitions`` (``None`` where there is none).

        ``member``: a KIP-848 member asking as itself (its id and epoch go where the
        coordinator's version has them; a stale epoch raises ``StaleMemberEpochError``)."""
        topics: dict[str, list[int]] = {}
        for tp in sorted(partitions):
            topics.setdefault(tp.topic, []).append(tp.partition)
        if member is not None and member.member_id and await self._fetch_version() >= _MEMBER_FETCH:
            answer = await self._fetch_as_member(topics, member)
        else:
            answer = await self._fetch(topics)
        error = error_for_code(getattr(answer, "error_code", 0), f"offsets of {self.group_id}")
        if error is not None:
            raise error
        found: dict[TopicPartition, OffsetAndMetadata | None] = dict.fromkeys(partitions)
        for topic in answer.topics:
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

    async def _fetch_version(self) -> int:
        coordinator = await self._cluster.coordinator(self.group_id)
        return await self._cluster.versions_for(coordinator, _OFFSET_FETCH)

    async def _fetch(self, topics: dict[str, list[int]]) -> Any:
        """OffsetFetch (v7 or below) of ``topics``: the response, which is the group's answer."""
        request = offset_fetch.OffsetFetchRequest(
            group_id=self.group_id,
            topics=tuple(
                offset_fetch.OffsetFetchRequestTopic(name=name, partition_indexes=tuple(ps))
                for name, ps in topics.items()
            ),
        )
        return await self._cluster.send(request, negotiate=True, max_version=7)

    async def _fetch_as_member(self, topics: dict[str, list[int]], member: Generation) -> Any:
        """OffsetFetch v9 of ``topics`` naming the member: the group's part of the answer."""
        m = offset_fetch_member
        group = m.OffsetFetchRequestGroup(
            group_id=self.group_id,
            member_id=member.member_id,
            member_epoch=member.generation_id,
            topics=tuple(
                m.OffsetFetchRequestTopics(name=name, partition_indexes=tuple(ps))
                for name, ps in topics.items()
            ),
        )
        request = m.OffsetFetchRequest(groups=(group,))
        response = await self._cluster.send(request, negotiate=True, max_version=_MEMBER_FETCH)
        answer = next((g for g in response.groups if g.group_id == self.group_id), None)
        if answer is None:
            raise ProtocolError(f"OffsetFetch answered no group {self.group_id!r}")
        return answer
