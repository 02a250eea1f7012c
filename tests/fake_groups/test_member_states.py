"""A KIP-848 member's reconciliation, move by move: every (state, event) of the table, each
reached through the reconciliation itself, and the moves the table refuses."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

import pytest

from kafkawire.testing.fake.groups._consumer_member import ConsumerMember
from kafkawire.testing.fake.groups._member_state import (
    TRANSITIONS,
    IllegalMemberTransitionError,
    MemberState,
    ReconcileEvent,
    next_state,
)
from kafkawire.testing.fake.groups._reconcile import reconcile

T = uuid.UUID(int=7)
M = MemberState
E = ReconcileEvent


def tps(*partitions: int) -> frozenset[tuple[uuid.UUID, int]]:
    return frozenset((T, p) for p in partitions)


def member(
    state: MemberState, epoch: int, assigned: Iterable[int], pending: Iterable[int] = ()
) -> ConsumerMember:
    return ConsumerMember(
        member_id="m",
        state=state,
        member_epoch=epoch,
        previous_member_epoch=epoch - 1,
        assigned=tps(*assigned),
        pending_revocation=tps(*pending),
    )


def owners(**by_partition: str) -> dict[tuple[uuid.UUID, int], str]:
    return {(T, int(p[1:])): owner for p, owner in by_partition.items()}


# (state, event): the member before, the target epoch and partitions, who else owns what,
# what the member reports owning; then the state, epoch, assigned and pending expected.
CASES = {
    (M.STABLE, E.MUST_REVOKE): (
        member(M.STABLE, 1, [0, 1]), 2, [0], {}, [0, 1],
        (M.UNREVOKED_PARTITIONS, 1, [0], [1]),
    ),
    (M.STABLE, E.MUST_WAIT): (
        member(M.STABLE, 1, [0]), 2, [0, 1], {"p1": "other"}, [0],
        (M.UNRELEASED_PARTITIONS, 2, [0], []),
    ),
    (M.STABLE, E.RECONCILED): (
        member(M.STABLE, 1, [0]), 2, [0, 1], {}, [0],
        (M.STABLE, 2, [0, 1], []),
    ),
    (M.UNREVOKED_PARTITIONS, E.STILL_OWNS_REVOKED): (
        member(M.UNREVOKED_PARTITIONS, 1, [0], [1]), 2, [0], {}, [0, 1],
        (M.UNREVOKED_PARTITIONS, 1, [0], [1]),
    ),
    (M.UNREVOKED_PARTITIONS, E.MUST_REVOKE): (
        member(M.UNREVOKED_PARTITIONS, 1, [0, 2], [1]), 3, [0], {}, [0, 2],
        (M.UNREVOKED_PARTITIONS, 1, [0], [2]),
    ),
    (M.UNREVOKED_PARTITIONS, E.MUST_WAIT): (
        member(M.UNREVOKED_PARTITIONS, 1, [0], [1]), 2, [0, 3], {"p3": "other"}, [0],
        (M.UNRELEASED_PARTITIONS, 2, [0], []),
    ),
    (M.UNREVOKED_PARTITIONS, E.RECONCILED): (
        member(M.UNREVOKED_PARTITIONS, 1, [0], [1]), 2, [0], {}, [0],
        (M.STABLE, 2, [0], []),
    ),
    (M.UNRELEASED_PARTITIONS, E.MUST_REVOKE): (
        member(M.UNRELEASED_PARTITIONS, 2, [0]), 3, [], {}, [0],
        (M.UNREVOKED_PARTITIONS, 2, [], [0]),
    ),
    (M.UNRELEASED_PARTITIONS, E.MUST_WAIT): (
        member(M.UNRELEASED_PARTITIONS, 2, [0]), 2, [0, 1], {"p1": "other"}, [0],
        (M.UNRELEASED_PARTITIONS, 2, [0], []),
    ),
    (M.UNRELEASED_PARTITIONS, E.RECONCILED): (
        member(M.UNRELEASED_PARTITIONS, 2, [0]), 2, [0, 1], {}, [0],
        (M.STABLE, 2, [0, 1], []),
    ),
}  # fmt: skip


def test_the_cases_cover_the_whole_table() -> None:
    assert set(CASES) == set(TRANSITIONS)


@pytest.mark.parametrize(("state", "event"), list(CASES))
def test_each_move_of_the_table(state: MemberState, event: ReconcileEvent) -> None:
    before, target_epoch, target, others, owned, expected = CASES[state, event]
    taken = {**owners(**{f"p{p}": "m" for _, p in before.owned()}), **owners(**others)}

    after = reconcile(before, target_epoch, tps(*target), taken.get, tps(*owned))

    assert after.state is TRANSITIONS[state, event] is expected[0]
    assert (after.member_epoch, after.assigned, after.pending_revocation) == (
        expected[1],
        tps(*expected[2]),
        tps(*expected[3]),
    )
    # Only a move into UNREVOKED_PARTITIONS keeps the epoch.
    assert (after.member_epoch == before.member_epoch) is (
        after.state is M.UNREVOKED_PARTITIONS or before.member_epoch == target_epoch
    )


@pytest.mark.parametrize("state", [M.STABLE, M.UNRELEASED_PARTITIONS])
def test_only_a_member_revoking_can_still_own_revoked_partitions(state: MemberState) -> None:
    with pytest.raises(IllegalMemberTransitionError, match="still owns revoked partitions"):
        next_state("m", state, E.STILL_OWNS_REVOKED)


def test_a_heartbeat_that_does_not_say_what_it_owns_revokes_nothing() -> None:
    before = member(M.UNREVOKED_PARTITIONS, 1, [0], [1])
    assert reconcile(before, 2, tps(0), lambda _: None, None) is before


def test_a_reconciled_member_is_left_as_it_is() -> None:
    before = member(M.STABLE, 2, [0])
    assert reconcile(before, 2, tps(0, 1), lambda _: None, tps(0)) is before
