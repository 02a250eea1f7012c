"""A partition's fetch state, without a broker: every move of the table works and every other
raises, and whatever background work writes for an epoch that has moved on is dropped."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from itertools import product

import pytest

from kafkawire.cluster import TopicPartition
from kafkawire.cluster.transitions import IllegalTransitionError
from kafkawire.consumer.fetching.fetch_state import FETCH_MOVES, FetchState
from kafkawire.consumer.fetching.leader_epochs import EpochEnd
from kafkawire.consumer.fetching.subscription import PartitionState, SubscriptionState

T0 = TopicPartition("t", 0)
F = FetchState


def assigned(state: FetchState = F.INITIALIZING) -> tuple[SubscriptionState, PartitionState]:
    subscriptions = SubscriptionState("earliest", lambda: None)
    subscriptions.assign([T0])
    partition = subscriptions.state(T0)
    partition.fetch_state = state
    partition.position = 5 if state.has_position else None
    return subscriptions, partition


@pytest.mark.parametrize(("old", "new"), list(product(FetchState, repeat=2)), ids=str)
def test_every_move_of_the_table_works_and_every_other_raises(
    old: FetchState, new: FetchState
) -> None:
    subscriptions, partition = assigned(old)
    epoch = partition.epoch
    position = 7 if new.has_position else None
    if FETCH_MOVES.allows(old, new):
        subscriptions._move(T0, partition, new, position=position)
        assert (partition.fetch_state, partition.position) == (new, position)
        assert partition.epoch == epoch + 1  # every move moves the epoch on
    else:
        with pytest.raises(IllegalTransitionError, match=f"t/0: no move from {old.name}"):
            subscriptions._move(T0, partition, new, position=position)
        assert (partition.fetch_state, partition.epoch) == (old, epoch)


def test_pausing_and_revoking_leave_the_fetch_state_as_it_is() -> None:
    subscriptions, partition = assigned(F.FETCHING)
    subscriptions.pause([T0])
    subscriptions.start_revoking([T0])
    assert (partition.fetch_state, partition.position, partition.epoch) == (F.FETCHING, 5, 0)
    assert subscriptions.fetchable() == []
    subscriptions.resume([T0])
    assert partition.paused is False


Write = Callable[[SubscriptionState, int], object]

# Each background write, the fetch state it applies to, and the write (given the epoch its work
# began at).
WRITES: dict[str, tuple[FetchState, Write]] = {
    "committed offset": (F.INITIALIZING, lambda s, e: s.committed_offset_found(T0, e, 3, 1)),
    "no committed offset": (F.INITIALIZING, lambda s, e: s.committed_offset_found(T0, e, None)),
    "reset found": (F.AWAIT_RESET, lambda s, e: s.reset_found(T0, e, 3)),
    "reset refused": (F.AWAIT_RESET, lambda s, e: s.reset_refused(T0, e)),
    "out of range": (F.FETCHING, lambda s, e: s.out_of_range(T0, e)),
    "consumed": (F.FETCHING, lambda s, e: s.consumed(T0, e, 9, 2)),
    "fetched": (F.FETCHING, lambda s, e: s.fetched(T0, e, 100, 90)),
    "leader seen": (F.FETCHING, lambda s, e: s.leader_seen(T0, e, (1, 4), True)),
    "validated": (F.AWAIT_VALIDATION, lambda s, e: s.complete_validation(T0, e, EpochEnd(3, 2))),
}


def snapshot(partition: PartitionState) -> tuple[object, ...]:
    return tuple(v for f, v in dataclasses.asdict(partition).items() if f != "waiting")


@pytest.mark.parametrize("write", WRITES)
def test_a_write_for_an_older_epoch_is_dropped(write: str) -> None:
    state, apply = WRITES[write]
    subscriptions, partition = assigned(state)
    partition.leader_epoch = 3
    before = snapshot(partition)
    apply(subscriptions, partition.epoch)  # at the current epoch: it counts
    assert snapshot(partition) != before
    subscriptions, partition = assigned(state)
    partition.leader_epoch = 3
    began = partition.epoch
    subscriptions.seek(T0, 20)  # the application moved it meanwhile
    after_seek = snapshot(partition)
    apply(subscriptions, began)
    assert snapshot(partition) == after_seek


async def test_a_position_is_awaited_on_the_partition() -> None:
    subscriptions, _ = assigned(F.AWAIT_RESET)
    known = subscriptions.positioned(T0)
    assert subscriptions.positioned(T0) is known  # one per partition, whoever waits
    assert not known.done()
    subscriptions.reset_found(T0, subscriptions.state(T0).epoch, 4)
    assert known.done()
    subscriptions.request_reset([T0])
    again = subscriptions.positioned(T0)
    subscriptions.assign([])  # unassigned: the wait ends (and finds it unassigned)
    assert again.cancelled()
