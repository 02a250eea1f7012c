"""The idempotent producer's sequence state, walked without a broker: the producer id's table
(every allowed move works, every other raises), and the sequences given, acknowledged and
lost under it, as Kafka's Java producer keeps them (KIP-360)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kafkawire.cluster import TopicPartition
from kafkawire.cluster.transitions import IllegalTransitionError
from kafkawire.producer.sequences import (
    ID_MOVES,
    NO_PRODUCER_ID,
    IdState,
    ProducerIdAndEpoch,
    SequenceState,
)
from tests.producer.state_walk import check_move, every_pair

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
FIRST, BUMPED, OTHER = ProducerIdAndEpoch(7, 0), ProducerIdAndEpoch(7, 1), ProducerIdAndEpoch(8, 0)


@dataclass(eq=False)  # told apart by identity, as producer batches are
class Batch:
    """What the sequence state reads of a producer batch; ``build`` is what the sender does."""

    tp: TopicPartition
    records: int
    producer_state: tuple[int, int, int] | None = None

    def __len__(self) -> int:
        return self.records

    def build(self, sequences: SequenceState) -> tuple[int, int, int]:
        self.producer_state = sequences.assign(self)  # type: ignore[arg-type]
        return self.producer_state


def state(at: IdState, *, transactional: bool = False) -> SequenceState:
    sequences = SequenceState(transactional=transactional)
    if at is not IdState.NONE:
        sequences.initialized(FIRST)
    if at is IdState.BUMP_DUE:
        sequences.request_epoch_bump("a gap")
    elif at is IdState.NEW_ID_DUE:
        sequences.request_new_id("the broker forgot it")
    assert sequences.state is at
    return sequences


def test_the_table() -> None:
    assert set(ID_MOVES) == {
        (IdState.NONE, IdState.CURRENT),
        (IdState.CURRENT, IdState.BUMP_DUE),
        (IdState.CURRENT, IdState.NEW_ID_DUE),
        (IdState.BUMP_DUE, IdState.CURRENT),
        (IdState.BUMP_DUE, IdState.NEW_ID_DUE),
        (IdState.NEW_ID_DUE, IdState.CURRENT),
    }


@every_pair(IdState)
def test_every_move_the_table_allows_works_and_every_other_raises(
    source: IdState, target: IdState
) -> None:
    check_move(ID_MOVES, state(source), source, target)


# Each named operation from each state: the state it leaves, and what InitProducerId carries.
@pytest.mark.parametrize(
    ("at", "after_bump", "after_new_id", "asks"),
    [
        (IdState.NONE, IdState.NONE, IdState.NONE, NO_PRODUCER_ID),
        (IdState.CURRENT, IdState.BUMP_DUE, IdState.NEW_ID_DUE, NO_PRODUCER_ID),
        (IdState.BUMP_DUE, IdState.BUMP_DUE, IdState.NEW_ID_DUE, FIRST),
        (IdState.NEW_ID_DUE, IdState.NEW_ID_DUE, IdState.NEW_ID_DUE, NO_PRODUCER_ID),
    ],
    ids=lambda s: getattr(s, "name", ""),
)
def test_requests_for_a_change_move_only_where_the_table_allows(
    at: IdState, after_bump: IdState, after_new_id: IdState, asks: ProducerIdAndEpoch
) -> None:
    assert state(at).init_request() == asks
    bumping = state(at)
    bumping.request_epoch_bump("a gap")
    assert bumping.state is after_bump
    replacing = state(at)
    replacing.request_new_id("forgotten")
    assert replacing.state is after_new_id


@pytest.mark.parametrize("at", IdState, ids=lambda s: s.name)
def test_initialized_makes_the_id_current_where_the_table_allows(at: IdState) -> None:
    sequences = state(at)
    if ID_MOVES.allows(at, IdState.CURRENT):
        sequences.initialized(OTHER)
        assert (sequences.state, sequences.current) == (IdState.CURRENT, OTHER)
    else:
        with pytest.raises(IllegalTransitionError):
            sequences.initialized(OTHER)


@pytest.mark.parametrize("transactional", [False, True])
@pytest.mark.parametrize("at", IdState, ids=lambda s: s.name)
def test_batches_are_built_under_a_current_id_or_a_transactions_epoch(
    at: IdState, transactional: bool
) -> None:
    """A transactional producer goes on under its epoch while the bump waits for the abort;
    it never replaces its id."""
    if transactional and at is IdState.NEW_ID_DUE:
        with pytest.raises(IllegalTransitionError, match="never replaced"):
            state(at, transactional=True)
        return
    sequences = state(at, transactional=transactional)
    sendable = at is IdState.CURRENT or (transactional and at is IdState.BUMP_DUE)
    assert sequences.sendable is sendable
    batch = Batch(T0, 3)
    if sendable:
        assert batch.build(sequences) == (7, 0, 0)
    else:
        with pytest.raises(IllegalTransitionError, match="built while"):
            batch.build(sequences)


def test_sequences_advance_per_partition_and_a_retry_keeps_its_own() -> None:
    sequences = state(IdState.CURRENT)
    first, second, other = Batch(T0, 3), Batch(T0, 2), Batch(T1, 4)
    assert [b.build(sequences) for b in (first, second, other)] == [
        (7, 0, 0),
        (7, 0, 3),
        (7, 0, 0),
    ]
    assert (sequences.next_sequence(T0), sequences.in_flight(T0), sequences.in_flight()) == (
        5,
        2,
        3,
    )
    sequences.returned(first)  # a retriable error: sent again with the same sequences
    assert sequences.in_flight(T0) == 1
    assert first.build(sequences) == (7, 0, 0)
    assert sequences.next_sequence(T0) == 5


def test_acknowledgements_move_the_last_acked_sequence_and_tell_a_real_gap() -> None:
    """OUT_OF_ORDER_SEQUENCE_NUMBER is a real gap only on the batch right after the last
    acknowledged one (Java's isNextSequence); on a later one it is an older batch's."""
    sequences = state(IdState.CURRENT)
    first, second = Batch(T0, 3), Batch(T0, 2)
    first.build(sequences)
    second.build(sequences)
    assert (sequences.gap_is_real(first), sequences.gap_is_real(second)) == (True, False)
    sequences.acked(first)
    assert (sequences.last_acked(T0), sequences.gap_is_real(second)) == (2, True)
    sequences.acked(second)
    assert (sequences.last_acked(T0), sequences.in_flight()) == (4, 0)
    sequences.acked(first)  # a late duplicate answer does not move it back
    assert sequences.last_acked(T0) == 4


def test_a_batch_behind_the_last_acknowledged_one_has_a_real_gap() -> None:
    """A broker with no state for the id took the batches after a refused first one: the
    first can never follow them under this epoch, so its OUT_OF_ORDER is a real gap."""
    sequences = state(IdState.CURRENT)
    first, second, third, fourth = Batch(T0, 3), Batch(T0, 2), Batch(T0, 1), Batch(T0, 1)
    for batch in (first, second, third, fourth):
        batch.build(sequences)
    sequences.returned(first)
    sequences.acked(second)
    assert [sequences.gap_is_real(b) for b in (first, third, fourth)] == [True, True, False]


def test_sequences_wrap_at_the_largest_int32() -> None:
    sequences = state(IdState.CURRENT)
    before = Batch(T0, 2**31 - 2)
    before.build(sequences)
    sequences.acked(before)
    last, wrapping = Batch(T0, 1), Batch(T0, 3)
    assert last.build(sequences) == (7, 0, 2**31 - 2)
    assert wrapping.build(sequences) == (7, 0, 2**31 - 1)
    assert sequences.next_sequence(T0) == 2
    sequences.acked(last)
    assert sequences.gap_is_real(wrapping)
    sequences.acked(wrapping)
    assert sequences.last_acked(T0) == 1


def test_a_batch_lost_after_it_was_sent_bumps_the_epoch_and_sequences_start_again() -> None:
    sequences = state(IdState.CURRENT)
    lost, waiting, never_sent = Batch(T0, 3), Batch(T0, 2), Batch(T1, 1)
    lost.build(sequences)
    waiting.build(sequences)
    sequences.failed(never_sent, "not sent: leaves no gap")
    assert sequences.state is IdState.CURRENT
    sequences.failed(lost, "expired in flight")
    assert (sequences.state, sequences.in_flight()) == (IdState.BUMP_DUE, 1)
    assert sequences.init_request() == FIRST  # the bump carries the current id and epoch
    sequences.returned(waiting)
    sequences.initialized(BUMPED)
    assert (sequences.in_flight(), sequences.last_acked(T0)) == (0, -1)
    assert not sequences.gap_is_real(lost)  # built under the old epoch
    assert waiting.build(sequences) == (7, 1, 0)  # new sequences from 0
    sequences.failed(lost, "its answer came after the bump")  # no gap in the new epoch
    assert sequences.state is IdState.CURRENT


def test_an_answer_from_before_a_bump_changes_nothing() -> None:
    sequences = state(IdState.CURRENT)
    old = Batch(T0, 3)
    old.build(sequences)
    sequences.request_epoch_bump("a gap")
    sequences.initialized(BUMPED)
    sequences.acked(old)
    sequences.returned(old)
    assert (sequences.last_acked(T0), sequences.in_flight()) == (-1, 0)
    # Refused as too large: its parts are numbered in the new epoch when they are built.
    first, second = Batch(T0, 1), Batch(T0, 2)
    sequences.split(old, [first, second])  # type: ignore[list-item]
    assert (first.build(sequences), second.build(sequences)) == ((7, 1, 0), (7, 1, 1))


def test_the_same_id_and_epoch_given_again_start_sequences_over() -> None:
    """An in-memory broker that restarted (Tansu) answers UNKNOWN_PRODUCER_ID and then hands
    out the same id at epoch 0 again: the batches waiting are numbered anew from 0, or the
    broker refuses them as OUT_OF_ORDER for ever."""
    sequences = state(IdState.CURRENT)
    acked, waiting = Batch(T0, 1), Batch(T0, 2)
    acked.build(sequences)
    sequences.acked(acked)
    assert waiting.build(sequences) == (7, 0, 1)
    sequences.returned(waiting)
    sequences.request_new_id("UNKNOWN_PRODUCER_ID")
    sequences.initialized(FIRST)  # the same id and epoch as before
    assert waiting.build(sequences) == (7, 0, 0)
    assert sequences.gap_is_real(waiting)


def test_the_parts_of_a_batch_refused_as_too_large_take_its_sequences() -> None:
    """Java's ProducerBatch.split: the broker has none of the big batch, so its parts are
    numbered from its base sequence on, and the batch after it keeps its own; no bump."""
    sequences = state(IdState.CURRENT)
    before, big, after = Batch(T0, 1), Batch(T0, 5), Batch(T0, 2)
    for batch in (before, big, after):
        batch.build(sequences)
    sequences.acked(before)
    first, second = Batch(T0, 2), Batch(T0, 3)
    sequences.split(big, [first, second])  # type: ignore[list-item]
    assert (sequences.state, sequences.in_flight(T0), sequences.next_sequence(T0)) == (
        IdState.CURRENT,
        1,  # the batch after it; the parts are not sent yet
        8,
    )
    assert not sequences.gap_is_real(after)  # its OUT_OF_ORDER is the parts' gap: retried
    assert first.build(sequences) == (7, 0, 1)
    assert second.build(sequences) == (7, 0, 3)
    sequences.acked(first)
    sequences.acked(second)
    assert sequences.gap_is_real(after)
    assert after.build(sequences) == (7, 0, 6)
