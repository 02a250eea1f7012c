"""Groups: list (consumer and share groups, by state and type), describe consumer groups
(members and their assignments), delete.

A consumer group's members carry their subscription and assignment as the consumer
protocol's data messages (ConsumerProtocolSubscription, ConsumerProtocolAssignment), each an
int16 version followed by that version's body; :mod:`kafkawire.operations.member_data` reads
them, as it does for the consumer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafkawire.cluster import TopicPartition
from kafkawire.messages.delete_groups import v2 as delete_groups
from kafkawire.messages.describe_groups import v6 as describe_groups
from kafkawire.messages.list_groups import v5 as list_groups
from kafkawire.operations import member_data

from ._base import AdminBase, raise_top_level
from .results import ItemResults

__all__ = [
    "GroupDescription",
    "GroupListing",
    "GroupsMixin",
    "MemberDescription",
    "decode_assignment",
    "decode_subscription",
]

_CONSUMER = "consumer"


@dataclass(frozen=True, slots=True)
class GroupListing:
    """A group as ListGroups names it."""

    group_id: str
    protocol_type: str
    """``"consumer"`` for consumer groups, ``""`` for groups that only commit."""
    state: str
    """``""`` where the broker's ListGroups is older than v4."""
    type: str
    """``"classic"``, ``"consumer"`` (KIP-848) or ``"share"`` (KIP-932); ``""`` before ListGroups
    v5."""


@dataclass(frozen=True, slots=True)
class MemberDescription:
    """One member of a group, its subscription and assignment decoded."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    topics: tuple[str, ...]
    """What it subscribes to (consumer groups)."""
    assignment: tuple[TopicPartition, ...]
    """The partitions assigned to it (consumer groups)."""


@dataclass(frozen=True, slots=True)
class GroupDescription:
    """A group as DescribeGroups (or ConsumerGroupDescribe) answers: its state, protocol and
    members."""

    group_id: str
    state: str
    protocol_type: str
    protocol: str
    """The assignor chosen, such as ``"range"``."""
    members: tuple[MemberDescription, ...]


class GroupsMixin(AdminBase):
    async def list_groups(
        self, *, states: Iterable[str] = (), types: Iterable[str] = ()
    ) -> list[GroupListing]:
        """Every group on every broker (each broker lists those it coordinates), or those in
        ``states`` and of ``types`` ("classic", "consumer", "share"; a broker whose ListGroups
        is older than v5 cannot filter by type, and the call fails naming the field)."""
        request = list_groups.ListGroupsRequest(
            states_filter=tuple(states), types_filter=tuple(types)
        )
        answers = await self._cluster.send_to_all(request, negotiate=True)
        listed = []
        for response in answers.values():
            raise_top_level(response)
            listed += [
                GroupListing(
                    group_id=g.group_id,
                    protocol_type=g.protocol_type,
                    state=getattr(g, "group_state", ""),
                    type=getattr(g, "group_type", ""),
                )
                for g in response.groups
            ]
        return sorted(listed, key=lambda g: g.group_id)

    async def describe_groups(self, group_ids: Iterable[str]) -> ItemResults[str, GroupDescription]:
        """Each group's state and members, asked of its coordinator."""
        return await self._each_group(
            group_ids,
            lambda g: describe_groups.DescribeGroupsRequest(groups=(g,)),
            lambda response: response.groups,
            _described,
        )

    async def delete_groups(self, group_ids: Iterable[str]) -> ItemResults[str, None]:
        """Delete groups that have no members (their committed offsets, or a share group's
        start offsets, go with them)."""
        return await self._each_group(
            group_ids,
            lambda g: delete_groups.DeleteGroupsRequest(groups_names=(g,)),
            lambda response: response.results,
            lambda _: None,
        )


def _described(answer: Any) -> GroupDescription:
    consumer = answer.protocol_type == _CONSUMER
    return GroupDescription(
        group_id=answer.group_id,
        state=answer.group_state,
        protocol_type=answer.protocol_type,
        protocol=answer.protocol_data,
        members=tuple(_member(m, consumer=consumer) for m in answer.members),
    )


def _member(member: Any, *, consumer: bool) -> MemberDescription:
    topics: tuple[str, ...] = ()
    assigned: tuple[TopicPartition, ...] = ()
    if consumer:
        topics = decode_subscription(member.member_metadata)
        assigned = decode_assignment(member.member_assignment)
    return MemberDescription(
        member_id=member.member_id,
        group_instance_id=getattr(member, "group_instance_id", None),
        client_id=member.client_id,
        client_host=member.client_host,
        topics=topics,
        assignment=assigned,
    )


def decode_subscription(data: bytes) -> tuple[str, ...]:
    """The topics a consumer protocol subscription names (empty bytes: none)."""
    if not data:
        return ()
    return member_data.decode_subscription(data).topics


def decode_assignment(data: bytes) -> tuple[TopicPartition, ...]:
    """The partitions a consumer protocol assignment gives (empty bytes: none)."""
    return tuple(member_data.decode_assignment(data))
