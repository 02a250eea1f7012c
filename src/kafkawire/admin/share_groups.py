"""Share groups (KIP-932): describe them, and list, alter and delete their start offsets.

A share group has no committed offsets: each partition it reads has a start offset (SPSO, the
first record not yet acknowledged or archived) kept with the partition's share state. Java's
admin client calls these ``describeShareGroups``, ``listShareGroupOffsets``,
``alterShareGroupOffsets`` and ``deleteShareGroupOffsets``; each request goes to the group's
coordinator. Altering and deleting need a group without members (NON_EMPTY_GROUP otherwise).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.cluster import TopicPartition
from kafkawire.errors import KafkawireError
from kafkawire.messages.alter_share_group_offsets import v0 as alter
from kafkawire.messages.delete_share_group_offsets import v0 as delete
from kafkawire.messages.describe_share_group_offsets import v1 as offsets
from kafkawire.messages.share_group_describe import v1 as describe

from ._base import AdminBase, raise_top_level
from .results import ItemResults, error_of, unanswered

__all__ = [
    "ShareGroupDescription",
    "ShareGroupsMixin",
    "ShareMemberDescription",
    "SharePartitionOffset",
]


@dataclass(frozen=True, slots=True)
class ShareMemberDescription:
    """One member of a share group and the partitions it reads."""

    member_id: str
    client_id: str
    client_host: str
    rack_id: str | None
    member_epoch: int
    topics: tuple[str, ...]
    """What it subscribes to."""
    assignment: tuple[TopicPartition, ...]
    """The partitions it reads (shared with others)."""


@dataclass(frozen=True, slots=True)
class ShareGroupDescription:
    """A share group as ShareGroupDescribe answers: its state, epochs, assignor and members."""

    group_id: str
    state: str
    """``"Empty"``, ``"Stable"`` (Kafka's share-group states)."""
    group_epoch: int
    assignment_epoch: int
    assignor: str
    """``"simple"``."""
    members: tuple[ShareMemberDescription, ...]


@dataclass(frozen=True, slots=True)
class SharePartitionOffset:
    """Where a share group stands in a partition (Java's ``SharePartitionOffsetInfo``)."""

    start_offset: int  # -1: the group has not read the partition yet
    leader_epoch: int | None  # None where unknown
    lag: int | None  # records from the start offset not yet delivered to the end (KIP-1226);
    # None where unknown, or where the broker's DescribeShareGroupOffsets is older than v1


class ShareGroupsMixin(AdminBase):
    async def describe_share_groups(
        self, group_ids: Iterable[str]
    ) -> ItemResults[str, ShareGroupDescription]:
        """Each share group's state, epochs and members, asked of its coordinator."""
        return await self._each_group(
            group_ids,
            lambda g: describe.ShareGroupDescribeRequest(group_ids=(g,)),
            lambda response: response.groups,
            _described,
        )

    async def list_share_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> ItemResults[TopicPartition, SharePartitionOffset]:
        """Where ``group_id`` stands in ``partitions``, or in every partition it has read
        (``None``). A group that does not exist raises GroupIdNotFoundError."""
        wanted = None if partitions is None else [TopicPartition(*tp) for tp in partitions]
        topics = None
        if wanted is not None:
            by_topic: dict[str, list[int]] = {}
            for tp in wanted:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            topics = tuple(
                offsets.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=tuple(ps))
                for t, ps in by_topic.items()
            )
        request = offsets.DescribeShareGroupOffsetsRequest(
            groups=(
                offsets.DescribeShareGroupOffsetsRequestGroup(group_id=group_id, topics=topics),
            )
        )
        response = await self._send(request)
        group = next((g for g in response.groups if g.group_id == group_id), None)
        if group is None:
            raise unanswered(f"share group {group_id!r}", response)
        error = error_of(group)
        if error is not None:
            raise error
        results: dict[TopicPartition, SharePartitionOffset | KafkawireError] = {}
        for topic in group.topics:
            for answer in topic.partitions:
                tp = TopicPartition(topic.topic_name, answer.partition_index)
                results[tp] = error_of(answer) or _offset(answer)
        for tp in wanted or ():
            results.setdefault(tp, unanswered(f"{tp.topic}/{tp.partition}", response))
        return ItemResults(results)

    async def alter_share_group_offsets(
        self, group_id: str, start_offsets: Mapping[TopicPartition, int]
    ) -> ItemResults[TopicPartition, None]:
        """Start ``group_id`` at these offsets (what was in flight there is forgotten). The
        group must have no members; a group-wide refusal raises."""
        by_topic: dict[str, list[Any]] = {}
        for tp, offset in start_offsets.items():
            topic, partition = TopicPartition(*tp)
            by_topic.setdefault(topic, []).append(
                alter.AlterShareGroupOffsetsRequestPartition(
                    partition_index=partition, start_offset=offset
                )
            )
        request = alter.AlterShareGroupOffsetsRequest(
            group_id=group_id,
            topics=tuple(
                alter.AlterShareGroupOffsetsRequestTopic(topic_name=t, partitions=tuple(ps))
                for t, ps in by_topic.items()
            ),
        )
        response = await self._send(request)
        raise_top_level(response)
        results: dict[TopicPartition, KafkawireError | None] = {
            TopicPartition(t.topic_name, p.partition_index): error_of(p)
            for t in response.responses
            for p in t.partitions
        }
        for tp in start_offsets:
            results.setdefault(TopicPartition(*tp), unanswered(f"{tp[0]}/{tp[1]}", response))
        return ItemResults(results)

    async def delete_share_group_offsets(
        self, group_id: str, topics: Iterable[str]
    ) -> ItemResults[str, None]:
        """Forget ``group_id``'s state of ``topics``: its next read of them starts by its
        ``share.auto.offset.reset``. The group must have no members."""
        wanted = list(dict.fromkeys(topics))
        request = delete.DeleteShareGroupOffsetsRequest(
            group_id=group_id,
            topics=tuple(delete.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in wanted),
        )
        response = await self._send(request)
        raise_top_level(response)
        results: dict[str, KafkawireError | None] = {
            t.topic_name: error_of(t) for t in response.responses
        }
        for topic in wanted:
            results.setdefault(topic, unanswered(f"topic {topic!r}", response))
        return ItemResults(results)


def _described(answer: Any) -> ShareGroupDescription:
    return ShareGroupDescription(
        group_id=answer.group_id,
        state=answer.group_state,
        group_epoch=answer.group_epoch,
        assignment_epoch=answer.assignment_epoch,
        assignor=answer.assignor_name,
        members=tuple(
            ShareMemberDescription(
                member_id=m.member_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                topics=tuple(m.subscribed_topic_names),
                assignment=tuple(
                    TopicPartition(t.topic_name, p)
                    for t in m.assignment.topic_partitions
                    for p in t.partitions
                ),
            )
            for m in answer.members
        ),
    )


def _offset(answer: Any) -> SharePartitionOffset:
    # An answer at v0 has no lag: it reads as the field's default, -1.
    return SharePartitionOffset(
        start_offset=answer.start_offset,
        leader_epoch=None if answer.leader_epoch < 0 else answer.leader_epoch,
        lag=None if answer.lag < 0 else answer.lag,
    )
