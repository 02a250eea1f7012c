"""A share group (KIP-932; Kafka's ``ShareGroup``): members, epochs and the target assignment.

- The group epoch counts changes that call for a new assignment (a member joins, leaves or
  changes its subscription; a subscribed topic appears, grows or goes; its start offsets are
  altered); the assignment epoch is the group epoch the target was computed at.
- Members need no reconciliation: a partition may be shared, so nothing has to be revoked
  first, and a member moves to the target assignment (and its epoch) at its next heartbeat.
- The state is derived, as Kafka derives it: Empty (no members) or Stable; Dead once deleted.
- A share group commits no offsets (its partitions' start offsets live with the share
  partitions): OffsetCommit and OffsetFetch find no consumer group there (GROUP_ID_NOT_FOUND).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from kafkawire.errors import GroupIdNotFoundError, UnknownMemberIdError

from ._consumer_member import Partitions
from ._share_assignor import assign_shares

__all__ = ["ShareGroup", "ShareGroupState", "ShareMember"]


class ShareGroupState(enum.StrEnum):
    """A share group's state (derived; the value is Kafka's name for it)."""

    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(frozen=True, kw_only=True)
class ShareMember:
    """One member of a share group (a value: each heartbeat builds the next one)."""

    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    member_epoch: int = 0
    assigned: Partitions = frozenset()


class ShareGroup:
    """One share group."""

    kind = "share"

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ShareMember] = {}
        self.target: dict[str, Partitions] = {}
        # The subscribed topics as (topic id, partition count) when last seen.
        self.subscription_metadata: dict[str, tuple[uuid.UUID, int]] = {}
        self.dead = False

    @property
    def state(self) -> ShareGroupState:
        if self.dead:
            return ShareGroupState.DEAD
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def is_empty(self) -> bool:
        return not self.members

    def member(self, member_id: str) -> ShareMember:
        found = self.members.get(member_id)
        if found is None:
            raise UnknownMemberIdError(
                f"Member {member_id} is not a member of group {self.group_id}."
            )
        return found

    def subscribed_topics(self) -> frozenset[str]:
        return frozenset().union(*(m.subscribed_topic_names for m in self.members.values()))

    def compute_subscription_metadata(
        self, topics: Mapping[str, tuple[uuid.UUID, int]]
    ) -> dict[str, tuple[uuid.UUID, int]]:
        return {name: topics[name] for name in sorted(self.subscribed_topics()) if name in topics}

    def update_target_assignment(self) -> None:
        """Every member's target at the group epoch (:mod:`._share_assignor`)."""
        self.target = assign_shares(
            {m.member_id: m.subscribed_topic_names for m in self.members.values()},
            self.target,
            self.subscription_metadata,
        )
        self.assignment_epoch = self.group_epoch

    def remove_member(self, member_id: str) -> ShareMember | None:
        self.target.pop(member_id, None)
        return self.members.pop(member_id, None)

    # -- offsets: a share group has none to commit or fetch ----------------------------------

    def validate_offset_commit(
        self, member_id: str, member_epoch: int, version: int, *, transactional: bool
    ) -> None:
        raise GroupIdNotFoundError(f"Group {self.group_id} is not a consumer group.")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        raise GroupIdNotFoundError(f"Group {self.group_id} is not a consumer group.")
