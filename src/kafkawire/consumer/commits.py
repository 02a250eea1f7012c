"""The consumer's committed offsets, for one group: commit them and read them back, all or
nothing (the first partition's error is raised).

The requests are :mod:`kafkawire.operations.group_offsets`'s, shared with the admin client:
commits carry the member's generation and id (a simple consumer with manual assignment sends
generation -1 and no member id, which brokers accept for a group with no members), a KIP-848
member's its member epoch there, and a KIP-848 member reads its commits as itself where the
coordinator serves OffsetFetch v9.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import KafkawireError
from kafkawire.operations.group_offsets import (
    Generation,
    OffsetAndMetadata,
    commit_offsets,
    committed_offsets,
)

__all__ = ["Generation", "OffsetAndMetadata", "OffsetStore"]


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
        errors = await commit_offsets(self._cluster, self.group_id, offsets, generation)
        error = next((e for e in errors.values() if e is not None), None)
        if error is not None:
            raise error

    async def committed(
        self, partitions: Collection[TopicPartition], member: Generation | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The committed offset of each of ``partitions`` (``None`` where there is none).

        ``member``: a KIP-848 member asking as itself (its id and epoch go where the
        coordinator's version has them; a stale epoch raises ``StaleMemberEpochError``)."""
        found: dict[TopicPartition, OffsetAndMetadata | None] = dict.fromkeys(partitions)
        answered = await committed_offsets(self._cluster, self.group_id, partitions, member)
        for tp, answer in answered.items():
            if isinstance(answer, KafkawireError):
                raise answer
            if answer.offset >= 0:
                found[tp] = answer
        return found
