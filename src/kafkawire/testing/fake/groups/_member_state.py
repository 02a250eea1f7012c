"""The reconciliation states of a KIP-848 member (Kafka's ``MemberState``), and what moves a
member between them: one table of (state, event) -> state, which :mod:`._reconcile` follows.

States:

- ``STABLE``: the member owns exactly its share of the target assignment of its epoch.
- ``UNREVOKED_PARTITIONS``: the member must give up partitions before it may move to the new
  epoch; it stays at its old epoch until a heartbeat no longer reports them (or its rebalance
  timeout fences it).
- ``UNRELEASED_PARTITIONS``: the member is at the new epoch and owns what it may, but waits for
  partitions their previous owners have not given up yet; it gets them once they are free.

Events (what reconciling the member against the target assignment finds):

- ``STILL_OWNS_REVOKED``: a heartbeat still reports partitions the member must give up (only
  possible while it is in UNREVOKED_PARTITIONS: it stays there, at its epoch);
- ``MUST_REVOKE``: the next assignment drops partitions the member still reports owning;
- ``MUST_WAIT``: the next assignment adds partitions another member still owns;
- ``RECONCILED``: the member owns its whole target assignment.

A move into UNREVOKED_PARTITIONS keeps the member's epoch; every other move takes it to the
target assignment's epoch. So no partition is ever owned at one epoch by two members: a
partition moves only after its previous owner has revoked it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

__all__ = [
    "TRANSITIONS",
    "IllegalMemberTransitionError",
    "MemberState",
    "ReconcileEvent",
    "next_state",
]


class MemberState(enum.Enum):
    """Where a KIP-848 member is in reaching its target assignment."""

    STABLE = "Stable"
    UNREVOKED_PARTITIONS = "UnrevokedPartitions"
    UNRELEASED_PARTITIONS = "UnreleasedPartitions"


class ReconcileEvent(enum.Enum):
    """What reconciling a member against its target assignment found (see the module)."""

    STILL_OWNS_REVOKED = "still owns revoked partitions"
    MUST_REVOKE = "must revoke partitions"
    MUST_WAIT = "waits for partitions others hold"
    RECONCILED = "owns its target assignment"


_M = MemberState
_E = ReconcileEvent

TRANSITIONS: Mapping[tuple[MemberState, ReconcileEvent], MemberState] = {
    (_M.STABLE, _E.MUST_REVOKE): _M.UNREVOKED_PARTITIONS,
    (_M.STABLE, _E.MUST_WAIT): _M.UNRELEASED_PARTITIONS,
    (_M.STABLE, _E.RECONCILED): _M.STABLE,
    (_M.UNREVOKED_PARTITIONS, _E.STILL_OWNS_REVOKED): _M.UNREVOKED_PARTITIONS,
    (_M.UNREVOKED_PARTITIONS, _E.MUST_REVOKE): _M.UNREVOKED_PARTITIONS,
    (_M.UNREVOKED_PARTITIONS, _E.MUST_WAIT): _M.UNRELEASED_PARTITIONS,
    (_M.UNREVOKED_PARTITIONS, _E.RECONCILED): _M.STABLE,
    (_M.UNRELEASED_PARTITIONS, _E.MUST_REVOKE): _M.UNREVOKED_PARTITIONS,
    (_M.UNRELEASED_PARTITIONS, _E.MUST_WAIT): _M.UNRELEASED_PARTITIONS,
    (_M.UNRELEASED_PARTITIONS, _E.RECONCILED): _M.STABLE,
}


class IllegalMemberTransitionError(RuntimeError):
    """An event the table has no move for in that state: a bug in the coordinator."""


def next_state(member_id: str, state: MemberState, event: ReconcileEvent) -> MemberState:
    """The state ``event`` moves a member in ``state`` to."""
    target = TRANSITIONS.get((state, event))
    if target is None:
        raise IllegalMemberTransitionError(
            f"member {member_id!r} in {state.value}: no move on {event.value!r}"
        )
    return target
