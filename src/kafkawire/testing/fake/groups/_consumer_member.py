"""A KIP-848 member as the coordinator keeps it (Kafka's ``ConsumerGroupMember``).

A frozen value: every heartbeat builds the member's next version with ``dataclasses.replace``
and the group swaps it in, so "did anything change" is a comparison. Partitions are
``(topic id, partition)`` pairs.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from ._member_state import MemberState

__all__ = ["ConsumerMember", "Partitions", "TopicIdPartition"]

TopicIdPartition = tuple[uuid.UUID, int]
Partitions = frozenset[TopicIdPartition]

# The epochs a leaving member sends: gone for good, or (static members) back soon.
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2


@dataclass(frozen=True, kw_only=True)
class ConsumerMember:
    """One member of a KIP-848 consumer group."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    state: MemberState = MemberState.STABLE
    member_epoch: int = 0
    previous_member_epoch: int = 0
    # What the member owns now, and what it was asked to give up and has not yet.
    assigned: Partitions = frozenset()
    pending_revocation: Partitions = frozenset()

    @property
    def regex(self) -> str | None:
        """The subscribed regular expression, if the member has one (empty means none)."""
        return self.subscribed_topic_regex or None

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def owned(self) -> Partitions:
        """Every partition held by the member: assigned or not yet revoked."""
        return self.assigned | self.pending_revocation
