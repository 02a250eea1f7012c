"""The group APIs of administrators: DescribeGroups (v0-6), ListGroups (v0-5), DeleteGroups
(v0-2) and ConsumerGroupDescribe (v0-1), as Kafka answers them.

- DescribeGroups describes classic groups: members with their metadata and assignment once
  the group is Stable. A group that is missing or not classic is "Dead"; from v6 with
  GROUP_ID_NOT_FOUND and a message, before v6 without an error (as Kafka 4 answers).
- ListGroups lists the groups the receiving node coordinates, filtered by state (v4+,
  case-insensitive) and type (v5+: "classic", "consumer", "share"; a share group's protocol
  type is "share").
- DeleteGroups deletes groups without members, with their offsets (a share group with its
  share partitions' state); NON_EMPTY_GROUP for the others, GROUP_ID_NOT_FOUND for unknown
  ids.
- ConsumerGroupDescribe describes KIP-848 groups: epochs, assignor, each member's
  subscription, assignment and target assignment.

No authorizer: the authorized operations asked for are every group operation.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafkawire.errors import (
    BrokerError,
    GroupIdNotFoundError,
    InvalidGroupIdError,
    NonEmptyGroupError,
    NotCoordinatorError,
)
from kafkawire.messages.consumer_group_describe import v1 as cgd
from kafkawire.messages.delete_groups import v2 as delete
from kafkawire.messages.describe_groups import v6 as describe
from kafkawire.messages.list_groups import v5 as listing
from kafkawire.testing.fake.view import ShareStateView

from ._classic_group import ClassicGroup
from ._classic_state import ClassicGroupState
from ._consumer_group import ConsumerGroup
from ._consumer_member import ConsumerMember, Partitions
from ._groups import Group, Groups
from ._modern import by_topic
from ._offsets import OffsetStore
from ._share_group import ShareGroup

__all__ = [
    "GROUP_OPERATIONS",
    "OMITTED_OPERATIONS",
    "Coordinates",
    "GroupAdmin",
    "named_assignment",
]

# READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10), ALTER_CONFIGS (11): what Kafka
# answers for a group when no authorizer is configured.
GROUP_OPERATIONS = sum(1 << op for op in (3, 6, 8, 10, 11))
OMITTED_OPERATIONS = -(2**31)
Coordinates = Callable[[str], bool]  # whether the receiving node coordinates a group
_CONSUMER_MEMBER_TYPE = 1
_DEAD = ClassicGroupState.DEAD.value


def _group_type(group: Group) -> str:
    return group.kind


def _state(group: Group) -> str:
    return group.state.value


def _protocol_type(group: Group) -> str:
    if isinstance(group, ClassicGroup):
        return group.protocol_type or ""
    return group.kind  # "consumer" or "share"


class GroupAdmin:
    """Describe, list and delete groups."""

    def __init__(
        self,
        groups: Groups,
        offsets: OffsetStore,
        shares: ShareStateView,
        topics: Callable[[], Mapping[str, tuple[uuid.UUID, int]]],
    ) -> None:
        self._groups = groups
        self._offsets = offsets
        self._shares = shares
        self._topics = topics

    def describe_groups(
        self,
        group_ids: Iterable[str],
        with_operations: bool,
        version: int,
        coordinates: Coordinates,
    ) -> describe.DescribeGroupsResponse:
        """The answer to a DescribeGroups (at v6, with the errors of ``version``)."""
        return describe.DescribeGroupsResponse(
            groups=tuple(
                self._describe(g, with_operations, version, coordinates) for g in group_ids
            )
        )

    def _describe(
        self, group_id: str, with_operations: bool, version: int, coordinates: Coordinates
    ) -> describe.DescribedGroup:
        if not coordinates(group_id):
            return describe.DescribedGroup(group_id=group_id, error_code=NotCoordinatorError.code)
        group = self._groups.get(group_id)
        if not isinstance(group, ClassicGroup):
            message = (
                f"Group {group_id} not found."
                if group is None
                else f"Group {group_id} is not a classic group."
            )
            return describe.DescribedGroup(
                group_id=group_id,
                group_state=_DEAD,
                error_code=GroupIdNotFoundError.code if version >= 6 else 0,
                error_message=message if version >= 6 else None,
            )
        stable = group.state is ClassicGroupState.STABLE
        return describe.DescribedGroup(
            group_id=group_id,
            group_state=group.state.value,
            protocol_type=group.protocol_type or "",
            protocol_data=(group.protocol_name or "") if stable else "",
            members=tuple(
                describe.DescribedGroupMember(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=m.metadata(group.protocol_name) if stable else b"",
                    member_assignment=m.assignment if stable else b"",
                )
                for m in group.members.values()
            ),
            authorized_operations=GROUP_OPERATIONS if with_operations else OMITTED_OPERATIONS,
        )

    def list_groups(
        self, states: Iterable[str], types: Iterable[str], coordinates: Coordinates
    ) -> listing.ListGroupsResponse:
        wanted_states = {s.strip().lower() for s in states}
        wanted_types = {t.strip().lower() for t in types}
        return listing.ListGroupsResponse(
            groups=tuple(
                listing.ListedGroup(
                    group_id=g.group_id,
                    protocol_type=_protocol_type(g),
                    group_state=_state(g),
                    group_type=_group_type(g),
                )
                for g in self._groups
                if coordinates(g.group_id)
                and (not wanted_states or _state(g).lower() in wanted_states)
                and (not wanted_types or _group_type(g) in wanted_types)
            )
        )

    def delete_groups(
        self, group_ids: Iterable[str], coordinates: Coordinates
    ) -> delete.DeleteGroupsResponse:
        results = []
        for group_id in dict.fromkeys(group_ids):
            try:
                self._delete(group_id, coordinates)
            except BrokerError as error:
                results.append(
                    delete.DeletableGroupResult(group_id=group_id, error_code=error.code)
                )
            else:
                results.append(delete.DeletableGroupResult(group_id=group_id))
        return delete.DeleteGroupsResponse(results=tuple(results))

    def _delete(self, group_id: str, coordinates: Coordinates) -> None:
        if not coordinates(group_id):
            raise NotCoordinatorError(f"this node does not coordinate {group_id}")
        group = self._groups.get(group_id)
        if group is None:
            raise GroupIdNotFoundError(f"Group {group_id} not found.")
        if not group.is_empty():
            raise NonEmptyGroupError(f"group {group_id} has members")
        self._groups.delete(group_id)
        self._offsets.delete_group(group_id)
        if isinstance(group, ShareGroup):
            self._shares.delete_share_states(group_id, None)

    def consumer_group_describe(
        self, group_ids: Iterable[str], with_operations: bool, coordinates: Coordinates
    ) -> cgd.ConsumerGroupDescribeResponse:
        return cgd.ConsumerGroupDescribeResponse(
            groups=tuple(
                self._describe_consumer(g, with_operations, coordinates) for g in group_ids
            )
        )

    def _describe_consumer(
        self, group_id: str, with_operations: bool, coordinates: Coordinates
    ) -> cgd.DescribedGroup:
        try:
            if not group_id:
                raise InvalidGroupIdError("the group id is empty")
            if not coordinates(group_id):
                raise NotCoordinatorError(f"this node does not coordinate {group_id}")
            group = self._groups.get(group_id)
            if group is None:
                raise GroupIdNotFoundError(f"Group {group_id} not found.")
            if not isinstance(group, ConsumerGroup):
                raise GroupIdNotFoundError(f"Group {group_id} is not a consumer group.")
        except BrokerError as error:
            return cgd.DescribedGroup(
                group_id=group_id, error_code=error.code, error_message=error.message
            )
        return cgd.DescribedGroup(
            group_id=group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=group.preferred_assignor(),
            members=tuple(self._member(group, m) for m in group.members.values()),
            authorized_operations=GROUP_OPERATIONS if with_operations else OMITTED_OPERATIONS,
        )

    def _member(self, group: ConsumerGroup, member: ConsumerMember) -> cgd.Member:
        return cgd.Member(
            member_id=member.member_id,
            instance_id=member.instance_id,
            rack_id=member.rack_id,
            member_epoch=member.member_epoch,
            client_id=member.client_id,
            client_host=member.client_host,
            subscribed_topic_names=tuple(sorted(member.subscribed_topic_names)),
            subscribed_topic_regex=member.regex,
            assignment=named_assignment(cgd, member.assigned, self._topics()),
            target_assignment=named_assignment(
                cgd, group.target.get(member.member_id, frozenset()), self._topics()
            ),
            member_type=_CONSUMER_MEMBER_TYPE,
        )


def named_assignment(
    module: Any, partitions: Partitions, topics: Mapping[str, tuple[uuid.UUID, int]]
) -> Any:
    """The ``Assignment`` of a ConsumerGroupDescribe or ShareGroupDescribe ``module``: the
    partitions by topic, each topic with its name (topics gone are left out)."""
    names = {topic_id: name for name, (topic_id, _) in topics.items()}
    return module.Assignment(
        topic_partitions=tuple(
            module.TopicPartitions(topic_id=t, topic_name=names[t], partitions=tuple(ps))
            for t, ps in by_topic(partitions).items()
            if t in names
        )
    )
