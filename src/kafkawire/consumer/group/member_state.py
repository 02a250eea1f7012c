"""Where a consumer stands in its group: one :class:`MemberState` for both protocols, and
the table of moves each protocol makes (:data:`CLASSIC_MOVES`, :data:`KIP848_MOVES`).

The names are those of Kafka's Java client (its KIP-848 ``MemberState``) where they fit both
protocols. The classic protocol adds SYNCING; UNJOINED is the name Java's classic coordinator
gives a member out of the group, and CLOSED is kafkawire's.

===============  ===========================================================================
UNSUBSCRIBED     KIP-848: subscribed to no topic: out of the group, nothing sent until the
                 application subscribes again.
UNJOINED         Out of the group: its next turn joins (at the start, and after the loss of
                 its partitions when it was thrown out or left for not polling).
JOINING          Joining. Classic: an eager member gives up its partitions in the poll, then
                 JoinGroup goes (again, in a rebalance: the generation it has stays valid for
                 commits meanwhile). KIP-848: heartbeats at epoch 0 until the broker names an
                 epoch.
SYNCING          Classic: JoinGroup answered (a generation); SyncGroup goes, with the
                 assignments if this member leads.
RECONCILING      An assignment arrived and is being made true in the application's next poll
                 (revoke, take up, tell the listener). Each entry starts a new round: work of
                 an older round that finishes late changes nothing.
ACKNOWLEDGING    KIP-848: reconciled; the next heartbeat, sent at once, acknowledges it.
STABLE           In the group with its assignment: heartbeats every interval.
FENCED           Thrown out (classic: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID; KIP-848:
                 FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID): its partitions are lost in the next
                 poll (nothing committed), then it joins again.
PREPARE_LEAVING  About to leave: on close the listener hears its partitions are revoked.
LEAVING          The leave goes (LeaveGroup; a heartbeat at epoch -1, or -2 for a static
                 member).
STALE            Left because the application did not poll within ``max_poll_interval_ms``:
                 its partitions are lost in the next poll, then it joins again.
FATAL            Ended by an error it cannot go on after (a fenced static member, not
                 authorized, ...): every call of the application raises it.
CLOSED           Closed.
===============  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from kafkawire.cluster.transitions import Transitions

__all__ = ["CLASSIC_MOVES", "KIP848_MOVES", "MemberState"]


class MemberState(Enum):
    UNSUBSCRIBED = "unsubscribed"
    UNJOINED = "unjoined"
    JOINING = "joining"
    SYNCING = "syncing"
    RECONCILING = "reconciling"
    ACKNOWLEDGING = "acknowledging"
    STABLE = "stable"
    FENCED = "fenced"
    PREPARE_LEAVING = "prepare leaving"
    LEAVING = "leaving"
    STALE = "stale"
    FATAL = "fatal"
    CLOSED = "closed"

    @property
    def active(self) -> bool:
        """In the group or joining it: it heartbeats, ``max_poll_interval_ms`` runs, and it
        leaves on close."""
        return self in _ACTIVE


_S = MemberState
_ACTIVE = frozenset({_S.JOINING, _S.SYNCING, _S.RECONCILING, _S.ACKNOWLEDGING, _S.STABLE})


def _union(
    *tables: Mapping[MemberState, frozenset[MemberState]],
) -> dict[MemberState, frozenset[MemberState]]:
    return {s: frozenset().union(*(t.get(s, frozenset()) for t in tables)) for s in MemberState}


_SHARED: dict[MemberState, frozenset[MemberState]] = {
    _S.UNJOINED: frozenset({_S.JOINING, _S.CLOSED}),
    # What befalls a member in the group in either protocol: thrown out, a fatal error,
    # leaving (closing, or for not polling).
    **{
        s: frozenset({_S.FENCED, _S.FATAL, _S.PREPARE_LEAVING})
        for s in (_S.JOINING, _S.RECONCILING, _S.STABLE)
    },
    _S.FENCED: frozenset({_S.UNJOINED, _S.CLOSED}),  # the loss heard: join again; or closed
    _S.STALE: frozenset({_S.UNJOINED, _S.CLOSED}),
    _S.PREPARE_LEAVING: frozenset({_S.LEAVING}),
    _S.LEAVING: frozenset({_S.STALE, _S.CLOSED}),
    _S.FATAL: frozenset({_S.CLOSED}),
}

CLASSIC_MOVES = Transitions(
    "a classic group member",
    _union(
        _SHARED,
        {
            _S.JOINING: frozenset({_S.SYNCING}),  # JoinGroup answered
            _S.SYNCING: frozenset(
                {_S.RECONCILING, _S.JOINING, _S.FENCED, _S.FATAL, _S.PREPARE_LEAVING}
            ),  # the assignment; SyncGroup failed (rebalancing again, ...): join again
            # applied (STABLE); another rebalance asked meanwhile, cooperative partitions to hand
            # over, or the poll's work failed: join again
            _S.RECONCILING: frozenset({_S.STABLE, _S.JOINING}),
            _S.STABLE: frozenset({_S.JOINING}),  # the group rebalances, or the subscription changed
        },
    ),
)
"""The moves of a member of a classic group."""

KIP848_MOVES = Transitions(
    "a KIP-848 group member",
    _union(
        _SHARED,
        {
            _S.UNSUBSCRIBED: frozenset({_S.JOINING, _S.CLOSED}),  # subscribed again: it joins
            _S.UNJOINED: frozenset({_S.UNSUBSCRIBED}),
            # an epoch (nothing to reconcile, or an assignment to make true)
            _S.JOINING: frozenset({_S.STABLE, _S.RECONCILING}),
            # done; the target went back to what it owns
            _S.RECONCILING: frozenset({_S.ACKNOWLEDGING, _S.STABLE}),
            _S.ACKNOWLEDGING: frozenset(
                {_S.STABLE, _S.RECONCILING, _S.FENCED, _S.FATAL, _S.PREPARE_LEAVING}
            ),  # acknowledged; a new target came meanwhile
            _S.STABLE: frozenset({_S.RECONCILING}),  # a new target
            _S.LEAVING: frozenset({_S.UNSUBSCRIBED}),  # left for want of a subscription
        },
    ),
)
"""The moves of a member of a KIP-848 consumer group."""
