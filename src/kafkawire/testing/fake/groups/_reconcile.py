"""Moving a KIP-848 member towards its target assignment (Kafka's
``CurrentAssignmentBuilder``).

Given the member, the target assignment and its epoch, who owns each partition now, and what
the member's heartbeat says it owns (``None``: it did not say), the member's next version:

- partitions it keeps: what it has and the target still gives it;
- partitions to revoke: what it has and the target no longer gives it. If it still reports
  owning any, it stays at its epoch in UNREVOKED_PARTITIONS with only the kept ones assigned;
- partitions to add: what the target gives it that it lacks, minus those another member still
  owns (unreleased). It moves to the target epoch with what it can have, in
  UNRELEASED_PARTITIONS if it waits for more, else STABLE.

A member in UNREVOKED_PARTITIONS moves on only once a heartbeat no longer reports the
partitions it was asked to give up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ._consumer_member import ConsumerMember, Partitions, TopicIdPartition
from ._member_state import MemberState, ReconcileEvent, next_state

__all__ = ["reconcile"]

_E = ReconcileEvent


def reconcile(
    member: ConsumerMember,
    target_epoch: int,
    target: Partitions,
    owner_of: Callable[[TopicIdPartition], str | None],
    owned: Partitions | None,
) -> ConsumerMember:
    """``member``'s next version (``member`` itself when nothing can move)."""
    if member.state is MemberState.STABLE and member.member_epoch == target_epoch:
        return member
    if member.state is MemberState.UNREVOKED_PARTITIONS and _still_owns(
        owned, member.pending_revocation
    ):
        next_state(member.member_id, member.state, _E.STILL_OWNS_REVOKED)
        return member
    return _next_assignment(member, target_epoch, target, owner_of, owned)


def _still_owns(owned: Partitions | None, revoked: Partitions) -> bool:
    # A heartbeat that does not say what it owns may still own anything.
    return owned is None or bool(owned & revoked)


def _next_assignment(
    member: ConsumerMember,
    target_epoch: int,
    target: Partitions,
    owner_of: Callable[[TopicIdPartition], str | None],
    owned: Partitions | None,
) -> ConsumerMember:
    kept = member.assigned & target
    to_revoke = member.assigned - kept
    wanted = target - kept
    unreleased = frozenset(tp for tp in wanted if owner_of(tp) not in (None, member.member_id))
    to_add = wanted - unreleased

    if to_revoke and _still_owns(owned, to_revoke):
        event, epoch, assigned, pending = _E.MUST_REVOKE, member.member_epoch, kept, to_revoke
    else:
        event = _E.MUST_WAIT if unreleased else _E.RECONCILED
        epoch, assigned, pending = target_epoch, kept | to_add, frozenset()
    state = next_state(member.member_id, member.state, event)
    return replace(
        member,
        state=state,
        previous_member_epoch=member.member_epoch,
        member_epoch=epoch,
        assigned=assigned,
        pending_revocation=pending,
    )
