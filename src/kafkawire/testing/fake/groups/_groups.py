"""Every group of the coordinator, classic, KIP-848 or share, by group id.

A group id names one group of one kind at a time. As in Kafka, an empty group of the other
kind gives way: a JoinGroup to an empty KIP-848 group replaces it with a classic one, and a
ConsumerGroupHeartbeat joining an empty classic group replaces it with a KIP-848 one (their
committed offsets stay). Kafka also converts non-empty groups from one protocol to the other
(KIP-848's online migration); this fake does not: a classic JoinGroup to a non-empty KIP-848
group is INCONSISTENT_GROUP_PROTOCOL, a KIP-848 join to a non-empty classic group
GROUP_ID_NOT_FOUND. A share group's id is taken by it alone: the other protocols find no
group of theirs there (INCONSISTENT_GROUP_PROTOCOL, GROUP_ID_NOT_FOUND), and a share heartbeat
to another kind of group is GROUP_ID_NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafkawire.errors import GroupIdNotFoundError, InconsistentGroupProtocolError

from ._classic_group import ClassicGroup
from ._classic_state import ClassicGroupState
from ._consumer_group import ConsumerGroup
from ._share_group import ShareGroup

__all__ = ["Group", "Groups"]

Group = ClassicGroup | ConsumerGroup | ShareGroup


class Groups:
    """The coordinator's groups."""

    def __init__(self) -> None:
        self._groups: dict[str, Group] = {}

    def __iter__(self) -> Iterator[Group]:
        return iter(list(self._groups.values()))

    def get(self, group_id: str) -> Group | None:
        return self._groups.get(group_id)

    def classic(self, group_id: str) -> ClassicGroup | None:
        """The classic group ``group_id``, if there is one."""
        group = self._groups.get(group_id)
        return group if isinstance(group, ClassicGroup) else None

    def classic_to_join(self, group_id: str, *, create: bool) -> ClassicGroup | None:
        """The classic group a JoinGroup goes to: created if ``create`` (a member without an
        id), replacing an empty KIP-848 group; ``None`` if there is none to join."""
        group = self._groups.get(group_id)
        if isinstance(group, ShareGroup):
            raise InconsistentGroupProtocolError(f"group {group_id} is a share group")
        if isinstance(group, ConsumerGroup):
            if not group.is_empty():
                raise InconsistentGroupProtocolError(
                    f"group {group_id} is a KIP-848 consumer group with members"
                )
            self.delete(group_id)
            group = None
        if group is None and create:
            group = self.create_classic(group_id)
        return group

    def create_classic(self, group_id: str) -> ClassicGroup:
        group = ClassicGroup(group_id)
        self._groups[group_id] = group
        return group

    def consumer(self, group_id: str, *, create: bool) -> ConsumerGroup:
        """The KIP-848 group ``group_id``; created if ``create``, replacing an empty classic
        group. GROUP_ID_NOT_FOUND when there is none (or it is a classic group in use)."""
        group = self._groups.get(group_id)
        if isinstance(group, ConsumerGroup):
            return group
        if isinstance(group, ShareGroup):
            raise GroupIdNotFoundError(f"Group {group_id} is not a consumer group.")
        if isinstance(group, ClassicGroup):
            if not (create and group.is_empty()):
                raise GroupIdNotFoundError(f"Group {group_id} is not a consumer group.")
            self.delete(group_id)
        elif not create:
            raise GroupIdNotFoundError(f"Group {group_id} not found.")
        created = ConsumerGroup(group_id)
        self._groups[group_id] = created
        return created

    def share(self, group_id: str, *, create: bool) -> ShareGroup:
        """The share group ``group_id``; created if ``create`` and there is no group by that
        id. GROUP_ID_NOT_FOUND when there is none, or another kind of group."""
        group = self._groups.get(group_id)
        if isinstance(group, ShareGroup):
            return group
        if group is not None:
            raise GroupIdNotFoundError(f"Group {group_id} is not a share group.")
        if not create:
            raise GroupIdNotFoundError(f"Group {group_id} not found.")
        created = ShareGroup(group_id)
        self._groups[group_id] = created
        return created

    def delete(self, group_id: str) -> None:
        """Forget the group; whoever still holds it sees it dead."""
        group = self._groups.pop(group_id, None)
        if isinstance(group, ClassicGroup):
            group.transition_to(ClassicGroupState.DEAD)
        elif group is not None:
            group.dead = True
