"""A KIP-848 consumer group (Kafka's ``ConsumerGroup``): members, epochs, the target
assignment, and who owns each partition now.

- The group epoch counts changes that call for a new target assignment (a member joins,
  leaves or changes its subscription; a subscribed topic appears, grows or goes); the
  assignment epoch is the group epoch the target assignment was computed at.
- The state is derived, as Kafka derives it: Empty (no members), Assigning (the target is
  behind the group epoch), Reconciling (some member is not yet at the target), Stable.
- Every partition has at most one owner (a member that has it assigned or has not yet revoked
  it); taking a partition that another member owns is a bug, and raises. This is the
  invariant KIP-848's reconciliation exists for.
"""

from __future__ import annotations

import enum
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace

from kafkawire.errors import (
    IllegalGenerationError,
    StaleMemberEpochError,
    UnknownMemberIdError,
    UnsupportedVersionError,
)

from ._assignors import DEFAULT_ASSIGNOR, AssignmentMember, assign
from ._consumer_member import ConsumerMember, Partitions, TopicIdPartition

__all__ = ["ConsumerGroup", "ConsumerGroupState", "OwnershipError"]

_MEMBER_EPOCH_COMMIT_VERSION = 9


class ConsumerGroupState(enum.StrEnum):
    """A KIP-848 group's state (derived; the value is Kafka's name for it)."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class OwnershipError(RuntimeError):
    """Two members would own one partition: a bug in the coordinator."""


class ConsumerGroup:
    """One KIP-848 consumer group."""

    kind = "consumer"

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerMember] = {}
        self.static_members: dict[str, str] = {}
        self.target: dict[str, Partitions] = {}
        self.owners: dict[TopicIdPartition, str] = {}
        # The topics some member subscribes to, as (topic id, partition count) when last seen.
        self.subscription_metadata: dict[str, tuple[uuid.UUID, int]] = {}
        self.dead = False

    @property
    def state(self) -> ConsumerGroupState:
        if self.dead:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def is_empty(self) -> bool:
        return not self.members

    # -- members ------------------------------------------------------------------------------

    def member(self, member_id: str) -> ConsumerMember:
        found = self.members.get(member_id)
        if found is None:
            raise UnknownMemberIdError(f"member {member_id} is not in group {self.group_id}")
        return found

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members[member_id]

    def owner_of(self, partition: TopicIdPartition) -> str | None:
        return self.owners.get(partition)

    def put_member(self, member: ConsumerMember) -> None:
        """Add ``member`` or replace its previous version, moving partition ownership."""
        self._release(member.member_id)
        for partition in member.owned():
            owner = self.owners.get(partition)
            if owner is not None:
                raise OwnershipError(
                    f"group {self.group_id}: partition {partition} is owned by {owner}, "
                    f"so member {member.member_id} cannot take it"
                )
            self.owners[partition] = member.member_id
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id

    def remove_member(self, member_id: str) -> ConsumerMember | None:
        """Take a member out with its target assignment; its partitions become free."""
        member = self.members.pop(member_id, None)
        self._release(member_id)
        self.target.pop(member_id, None)
        instance_id = member.instance_id if member is not None else None
        if instance_id is not None and self.static_members.get(instance_id) == member_id:
            del self.static_members[instance_id]
        return member

    def replace_static_member(self, old: ConsumerMember, new_member_id: str) -> ConsumerMember:
        """The static member ``old`` under a new member id at epoch 0, with its assignment and
        its target kept (KIP-848's static rejoin)."""
        target = self.target.get(old.member_id, frozenset())
        self.remove_member(old.member_id)
        new = replace(old, member_id=new_member_id, member_epoch=0, previous_member_epoch=0)
        self.put_member(new)
        self.target[new_member_id] = target
        return new

    def _release(self, member_id: str) -> None:
        for partition in [p for p, owner in self.owners.items() if owner == member_id]:
            del self.owners[partition]

    # -- subscriptions and the target assignment ----------------------------------------------

    @staticmethod
    def subscribed_topics(member: ConsumerMember, topic_names: Iterable[str]) -> frozenset[str]:
        """The member's topics: its names, and every topic its regular expression matches."""
        regex = member.regex
        matched = {t for t in topic_names if re.fullmatch(regex, t)} if regex is not None else set()
        return member.subscribed_topic_names | matched

    def compute_subscription_metadata(
        self, topics: Mapping[str, tuple[uuid.UUID, int]]
    ) -> dict[str, tuple[uuid.UUID, int]]:
        """What the members' subscriptions resolve to in ``topics`` now."""
        wanted: set[str] = set()
        for member in self.members.values():
            wanted |= self.subscribed_topics(member, topics)
        return {name: topics[name] for name in sorted(wanted) if name in topics}

    def preferred_assignor(self) -> str:
        """The server assignor most members ask for (Kafka's default when none asks)."""
        votes = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        if not votes:
            return DEFAULT_ASSIGNOR
        return max(sorted(votes), key=lambda name: votes[name])

    def update_target_assignment(self) -> None:
        """Compute every member's target at the group epoch with the preferred assignor."""
        topics = self.subscription_metadata
        spec = [
            AssignmentMember(
                member_id=m.member_id,
                instance_id=m.instance_id,
                topics=self.subscribed_topics(m, topics),
                previous=self.target.get(m.member_id, frozenset()),
            )
            for m in self.members.values()
        ]
        self.target = assign(self.preferred_assignor(), spec, topics)
        self.assignment_epoch = self.group_epoch

    def is_subscribed_to(self, topic: str) -> bool:
        return topic in self.subscription_metadata or any(
            topic in m.subscribed_topic_names for m in self.members.values()
        )

    # -- offsets ------------------------------------------------------------------------------

    def validate_offset_commit(
        self, member_id: str, member_epoch: int, version: int, *, transactional: bool
    ) -> None:
        """Kafka's checks of a commit to a consumer group."""
        if member_epoch < 0 and not self.members:
            return  # the admin client, or a consumer without group management
        member = self.member(member_id)
        if not transactional and version < _MEMBER_EPOCH_COMMIT_VERSION:
            raise UnsupportedVersionError(
                f"group {self.group_id}: members of a consumer group commit with "
                f"OffsetCommit v{_MEMBER_EPOCH_COMMIT_VERSION} or later"
            )
        self._validate_epoch(member, member_epoch, transactional=transactional)

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if member_id is None and member_epoch < 0:
            return
        self._validate_epoch(self.member(member_id or ""), member_epoch, transactional=False)

    def _validate_epoch(self, member: ConsumerMember, epoch: int, *, transactional: bool) -> None:
        if epoch != member.member_epoch:
            error = IllegalGenerationError if transactional else StaleMemberEpochError
            raise error(
                f"group {self.group_id}: member {member.member_id} is at epoch "
                f"{member.member_epoch}, not {epoch}"
            )
