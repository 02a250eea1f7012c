"""The states of a classic group and the moves between them (Kafka's ``ClassicGroupState``).

- ``EMPTY``: no members (a new group, a group whose members all left, or a "simple" group
  made by an offset commit). A JoinGroup starts a rebalance; SyncGroup, Heartbeat and
  LeaveGroup are answered UNKNOWN_MEMBER_ID; offsets may be committed without a generation.
- ``PREPARING_REBALANCE``: JoinGroups are held until every known member has rejoined or the
  rebalance timeout passes (for a group coming from EMPTY: the initial rebalance delay,
  stretched while new members keep arriving, up to the rebalance timeout). Heartbeats and
  SyncGroups are answered REBALANCE_IN_PROGRESS; commits of the old generation are accepted.
- ``COMPLETING_REBALANCE``: the new generation is out; SyncGroups are held until the leader's
  brings the assignment. Heartbeats are fine, commits get REBALANCE_IN_PROGRESS. A member that
  joins with new metadata, leaves or dies starts another rebalance.
- ``STABLE``: every member has its assignment. A join from the leader, or from a follower with
  new metadata, a leave or a death starts a rebalance.
- ``DEAD``: the group was deleted; whoever still holds it is answered COORDINATOR_NOT_AVAILABLE.
"""

from __future__ import annotations

import enum

from kafkawire.cluster.transitions import IllegalTransitionError, Transitions

__all__ = ["TRANSITIONS", "ClassicGroupState", "IllegalTransitionError"]


class ClassicGroupState(enum.StrEnum):
    """A classic group's state; the value is Kafka's name for it (DescribeGroups, ListGroups)."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_S = ClassicGroupState

# From each state, the states it may move to (Kafka lists the same as valid previous states).
TRANSITIONS = Transitions(
    "a classic group",
    {
        _S.EMPTY: frozenset({_S.PREPARING_REBALANCE, _S.DEAD}),
        _S.PREPARING_REBALANCE: frozenset({_S.EMPTY, _S.COMPLETING_REBALANCE, _S.DEAD}),
        _S.COMPLETING_REBALANCE: frozenset({_S.PREPARING_REBALANCE, _S.STABLE, _S.DEAD}),
        _S.STABLE: frozenset({_S.PREPARING_REBALANCE, _S.DEAD}),
        _S.DEAD: frozenset({_S.DEAD}),
    },
)


def check_transition(group_id: str, source: ClassicGroupState, target: ClassicGroupState) -> None:
    """Raise :class:`IllegalTransitionError` unless ``source`` may move to ``target``."""
    TRANSITIONS.check(source, target, f"classic group {group_id!r}")
