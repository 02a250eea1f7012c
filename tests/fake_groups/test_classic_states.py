"""The classic group's state table, and a walk through every move the protocol can make."""

from __future__ import annotations

import itertools

import pytest

from kafkawire.messages.delete_groups import v2 as delete_groups
from kafkawire.testing.fake.groups._classic_group import ClassicGroup
from kafkawire.testing.fake.groups._classic_state import (
    TRANSITIONS,
    ClassicGroupState,
    IllegalTransitionError,
    check_transition,
)

from .classic import member_id
from .harness import Harness, join, leave, sync

S = ClassicGroupState

# Kafka's ClassicGroupState: each state and the states it may be entered from.
KAFKA_VALID_PREVIOUS = {
    S.EMPTY: {S.PREPARING_REBALANCE},
    S.PREPARING_REBALANCE: {S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY},
    S.COMPLETING_REBALANCE: {S.PREPARING_REBALANCE},
    S.STABLE: {S.COMPLETING_REBALANCE},
    S.DEAD: {S.STABLE, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD},
}


@pytest.mark.parametrize(("source", "target"), list(itertools.product(S, S)))
def test_each_move_is_allowed_exactly_when_kafka_allows_it(
    source: ClassicGroupState, target: ClassicGroupState
) -> None:
    allowed = source in KAFKA_VALID_PREVIOUS[target]
    assert TRANSITIONS.allows(source, target) is allowed
    if allowed:
        check_transition("g", source, target)
    else:
        with pytest.raises(IllegalTransitionError, match=f"from {source.name} to {target.name}"):
            check_transition("g", source, target)


async def test_the_protocol_walks_every_move_between_live_states(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    moves: list[tuple[ClassicGroupState, ClassicGroupState]] = []
    original = ClassicGroup.transition_to

    def recording(self: ClassicGroup, target: ClassicGroupState) -> None:
        moves.append((self.state, target))
        original(self, target)

    monkeypatch.setattr(ClassicGroup, "transition_to", recording)
    h = Harness(group_initial_rebalance_delay_ms=3000)

    # Empty -> PreparingRebalance -> CompletingRebalance -> Stable.
    a = await member_id(h, client_id="a", session_ms=60_000)
    first = h.start(join(a, session_ms=60_000))
    await h.settle()
    h.advance(3)
    await h.settle()
    assert (await h.send(sync(a, first.result().generation_id, {}))).error_code == 0
    # Stable -> PreparingRebalance -> CompletingRebalance: a new member, everyone rejoins.
    b = await member_id(h, client_id="b", session_ms=60_000)
    joins = [h.start(join(b, session_ms=60_000)), h.start(join(a, session_ms=60_000))]
    await h.settle()
    assert all(t.done() for t in joins)
    # CompletingRebalance -> PreparingRebalance: another member before the assignment.
    c = await member_id(h, client_id="c", session_ms=60_000)
    held = h.start(join(c, session_ms=60_000))
    await h.settle()
    # PreparingRebalance -> Empty: everyone leaves.
    assert [
        m.error_code for m in (await h.send(leave((a, None), (b, None), (c, None)))).members
    ] == [
        0,
        0,
        0,
    ]
    await h.settle()
    assert held.done()
    # Empty -> Dead: the group is deleted.
    deleted = await h.send(delete_groups.DeleteGroupsRequest(groups_names=("g",)))
    assert deleted.results[0].error_code == 0

    assert moves == [
        (S.EMPTY, S.PREPARING_REBALANCE),
        (S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE),
        (S.COMPLETING_REBALANCE, S.STABLE),
        (S.STABLE, S.PREPARING_REBALANCE),
        (S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE),
        (S.COMPLETING_REBALANCE, S.PREPARING_REBALANCE),
        (S.PREPARING_REBALANCE, S.EMPTY),
        (S.EMPTY, S.DEAD),
    ]
