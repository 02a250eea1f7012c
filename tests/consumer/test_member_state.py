"""The group member's states and the moves of each protocol's table, walked without a broker:
on a real member of either protocol, every move its table holds works and every other raises
(a bug, not a user error), and each table is sound as a graph."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from itertools import product

import pytest

from kafkawire.cluster import Cluster
from kafkawire.cluster.transitions import IllegalTransitionError, Transitions
from kafkawire.consumer.fetching.subscription import SubscriptionState
from kafkawire.consumer.group.classic_member import ClassicMember
from kafkawire.consumer.group.kip848_member import Kip848Member
from kafkawire.consumer.group.member_state import CLASSIC_MOVES, KIP848_MOVES, MemberState
from kafkawire.consumer.group.membership import GroupContext, GroupMembership
from kafkawire.consumer.inbox import Inbox
from kafkawire.consumer.metrics import ConsumerMetrics
from kafkawire.consumer.settings import ConsumerSettings
from kafkawire.consumer.tasks import BackgroundTasks
from kafkawire.metrics import Metrics

S = MemberState
PROTOCOLS: dict[type[GroupMembership], Mapping[MemberState, frozenset[MemberState]]] = {
    ClassicMember: CLASSIC_MOVES,
    Kip848Member: KIP848_MOVES,
}
UNUSED = {ClassicMember: {S.UNSUBSCRIBED, S.ACKNOWLEDGING}, Kip848Member: {S.SYNCING}}


def member(kind: type[GroupMembership], state: MemberState) -> GroupMembership:
    """A member of ``kind`` in ``state``, which never talks to a broker."""
    settings = ConsumerSettings(bootstrap_servers=("127.0.0.1:1",), group_id="g")
    tasks = BackgroundTasks(restart_delay=0)

    async def nothing(*_: object) -> None:
        pass

    context = GroupContext(
        cluster=Cluster(settings.bootstrap_servers),
        settings=settings,
        subscriptions=SubscriptionState("earliest", lambda: None),
        on_assigned=nothing,
        commit=nothing,
        inbox=Inbox(tasks),
        tasks=tasks,
        metrics=ConsumerMetrics(Metrics(), settings, lambda: 0),
    )
    made = kind(context)
    made.state = state
    return made


@pytest.mark.parametrize(
    ("kind", "old", "new"),
    [(kind, old, new) for kind in PROTOCOLS for old, new in product(MemberState, repeat=2)],
    ids=lambda v: getattr(v, "__name__", getattr(v, "name", v)),
)
async def test_every_move_of_the_table_works_and_every_other_raises(
    kind: type[GroupMembership], old: MemberState, new: MemberState
) -> None:
    made = member(kind, old)
    if PROTOCOLS[kind].allows(old, new):
        made._move(new)
        assert made.state is new
    else:
        with pytest.raises(IllegalTransitionError, match=f"from {old.name} to {new.name}"):
            made._move(new)
        assert made.state is old


@pytest.mark.parametrize("kind", PROTOCOLS, ids=lambda k: k.__name__)
async def test_entering_reconciling_starts_a_round_whose_late_work_is_stale(
    kind: type[GroupMembership],
) -> None:
    made = member(kind, S.JOINING if kind is Kip848Member else S.SYNCING)
    made._move(S.RECONCILING)
    first = made._round
    assert made._current(first)
    made._move(S.FENCED)
    assert not made._current(first)  # thrown out: what that round's work does is dropped
    for state in [S.UNJOINED, S.JOINING] + ([S.SYNCING] if kind is ClassicMember else []):
        made._move(state)
    made._move(S.RECONCILING)
    assert made._round == first + 1
    assert not made._current(first)


def reachable(moves: Transitions[MemberState], start: MemberState) -> set[S]:
    seen, todo = {start}, deque([start])
    while todo:
        for nxt in moves.targets(todo.popleft()) - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


@pytest.mark.parametrize("kind", PROTOCOLS, ids=lambda k: k.__name__)
def test_each_state_of_a_protocol_is_reached_and_none_is_a_trap(
    kind: type[GroupMembership],
) -> None:
    """From UNJOINED (where a member starts) every state the protocol uses is reached, the
    others have no moves at all, and from every state the member can still close."""
    moves = PROTOCOLS[kind]
    assert reachable(moves, S.UNJOINED) == set(MemberState) - UNUSED[kind]
    for state in UNUSED[kind]:
        assert moves.targets(state) == frozenset()
        assert all(target is not state for _, target in moves)
    for state in set(MemberState) - UNUSED[kind]:
        assert S.CLOSED in reachable(moves, state), state
    assert moves.targets(S.CLOSED) == frozenset()


def test_the_states_that_count_as_in_the_group() -> None:
    active = {s for s in MemberState if s.active}
    assert active == {S.JOINING, S.SYNCING, S.RECONCILING, S.ACKNOWLEDGING, S.STABLE}
