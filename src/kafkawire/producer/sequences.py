"""The idempotent producer's sequence state: one value, :class:`SequenceState`, with no I/O.

Brokers keep, per producer id and partition, the sequence number they expect next, and
refuse or de-duplicate batches that do not follow it: so a retried batch is written once.
A batch gets its sequences when it is first built and keeps them on its retries; they start
at 0 per partition and wrap at 2**31 - 1.

The value holds, as Kafka's Java ``TransactionManager`` (its ``TxnPartitionMap``) does:

- the producer id and epoch, and where they stand (:class:`IdState`, table below);
- per partition, the next sequence to give, the last sequence the broker acknowledged, and
  the batches numbered under the current id and epoch and not yet done, by base sequence,
  with those whose attempt is out now (in flight).

A batch the broker refused as too large is not in its log: split in parts
(:meth:`SequenceState.split`), the parts take its sequences in order, so the batches numbered
after it keep theirs, and nothing changes the id (Java's ``ProducerBatch.split`` gives the
split batches the big batch's base sequence, counting on).

Why an id changes (KIP-360). A batch that failed for good after it was sent may leave a gap
(the broker may or may not have it): the epoch is bumped (InitProducerId with the current id
and epoch), after which every partition starts again at sequence 0 and the batches not yet
acknowledged get new sequences. OUT_OF_ORDER_SEQUENCE_NUMBER on the batch right after the
last acknowledged one is such a gap too, and so is it on a batch behind the last acknowledged
one (a broker without state for the id took the batches after it); on a later batch it is an
older batch's gap, and the batch is only retried (Java's ``canRetry``). UNKNOWN_PRODUCER_ID
(the broker lost the id's state: a truncated log, a restarted in-memory broker) asks for a
new id. An idempotent producer stops building batches while a change is due and makes it
once its batches in flight are back. A transactional one goes on under its epoch: a batch
that failed makes its transaction abortable, and the epoch is bumped once the transaction is
aborted (Java's ``epochBumpRequired``).

States of the id (``IdState``), and the moves between them:

==============  ===========================================================================
NONE            no id yet -> CURRENT
CURRENT         sequences are given under it -> BUMP_DUE, NEW_ID_DUE
BUMP_DUE        a gap: the epoch must be bumped -> CURRENT, NEW_ID_DUE
NEW_ID_DUE      the broker forgot the id: a new one is due -> CURRENT
==============  ===========================================================================
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from kafkawire.cluster import TopicPartition
from kafkawire.cluster.transitions import IllegalTransitionError, Transitions

from .batch import ProducerBatch

__all__ = ["NO_PRODUCER_ID", "IdState", "ProducerIdAndEpoch", "SequenceState"]

_log = logging.getLogger(__name__)

_SEQUENCES = 2**31  # sequence numbers wrap at 2**31 - 1
_HALF = _SEQUENCES // 2


@dataclass(frozen=True, slots=True)
class ProducerIdAndEpoch:
    producer_id: int
    epoch: int


NO_PRODUCER_ID = ProducerIdAndEpoch(-1, -1)
"""What InitProducerId carries to ask for a new id, and the id before one is given."""


class IdState(enum.Enum):
    NONE = "no producer id yet"
    CURRENT = "current"
    BUMP_DUE = "an epoch bump is due"
    NEW_ID_DUE = "a new producer id is due"


ID_MOVES = Transitions(
    "producer id",
    {
        IdState.NONE: {IdState.CURRENT},
        IdState.CURRENT: {IdState.BUMP_DUE, IdState.NEW_ID_DUE},
        IdState.BUMP_DUE: {IdState.CURRENT, IdState.NEW_ID_DUE},
        IdState.NEW_ID_DUE: {IdState.CURRENT},
    },
)


@dataclass(slots=True)
class _Partition:
    next_sequence: int = 0
    last_acked: int = -1  # the last sequence of the last batch acknowledged; -1: none yet
    # The batches given sequences under the current id and epoch and not yet acknowledged
    # or failed, with their base sequences (Java's inflightBatchesBySequence); those of them
    # whose attempt is out now.
    numbered: dict[ProducerBatch, int] = field(default_factory=dict)
    in_flight: set[ProducerBatch] = field(default_factory=set)


class SequenceState:
    """The producer id, its epoch and the sequences given under them (see the module doc)."""

    def __init__(self, *, transactional: bool) -> None:
        self.transactional = transactional
        self.state = IdState.NONE
        self.sendable = False
        """Whether batches may be built now: under a current id, or under a transactional
        producer's epoch whose bump waits for its transaction's abort. (An attribute kept
        with the state: the sender reads it for every request.)"""
        self.current = NO_PRODUCER_ID
        self._partitions: dict[TopicPartition, _Partition] = {}

    def _move(self, target: IdState) -> None:
        self.state = ID_MOVES.check(self.state, target)
        self.sendable = target is IdState.CURRENT or (
            self.transactional and target is IdState.BUMP_DUE
        )

    # --- the id --------------------------------------------------------------------------

    def request_epoch_bump(self, reason: str) -> None:
        """A batch may have left a gap: bump the epoch before sequences are given again (for
        a transactional producer: once its transaction is aborted)."""
        if self.state is IdState.CURRENT:
            _log.warning("producer id %s: bumping the epoch: %s", self._name(), reason)
            self._move(IdState.BUMP_DUE)

    def request_new_id(self, reason: str) -> None:
        """The broker has no state for the id: take a new one before the next batch is built
        (for a producer without a transactional id, whose id nothing else knows)."""
        if self.transactional:
            raise IllegalTransitionError("a transactional producer's id is never replaced")
        if self.state in (IdState.CURRENT, IdState.BUMP_DUE):
            _log.warning("producer id %s: asking for a new id: %s", self._name(), reason)
            self._move(IdState.NEW_ID_DUE)

    def init_request(self) -> ProducerIdAndEpoch:
        """What the next InitProducerId carries: the current id and epoch to bump them, or
        :data:`NO_PRODUCER_ID` for a new id."""
        return self.current if self.state is IdState.BUMP_DUE else NO_PRODUCER_ID

    def initialized(self, given: ProducerIdAndEpoch) -> None:
        """InitProducerId answered ``given``: every partition starts again at sequence 0."""
        if self.state is not IdState.NONE:
            _log.info(
                "producer id %d epoch %d, was %s", given.producer_id, given.epoch, self._name()
            )
        self._move(IdState.CURRENT)
        self.current = given
        self._partitions.clear()

    def _name(self) -> str:
        return f"{self.current.producer_id} epoch {self.current.epoch}"

    # --- the sequences -------------------------------------------------------------------

    def assign(self, batch: ProducerBatch) -> tuple[int, int, int]:
        """(producer id, epoch, base sequence) to build ``batch`` with, now in flight: its
        own if it was given them under the current id and epoch, else the partition's next.
        (A broker that lost its state may give the same id and epoch again: what counts is
        when a batch was numbered, not the id it carries.)"""
        if not self.sendable:
            raise IllegalTransitionError(f"a batch built while {self.state.value}")
        partition = self._partitions.get(batch.tp)
        if partition is None:
            partition = self._partitions[batch.tp] = _Partition()
        sequence = partition.numbered.get(batch)
        if sequence is None:
            sequence = partition.numbered[batch] = partition.next_sequence
            partition.next_sequence = (sequence + len(batch)) % _SEQUENCES
        partition.in_flight.add(batch)
        return (self.current.producer_id, self.current.epoch, sequence)

    def acked(self, batch: ProducerBatch) -> None:
        """The broker has ``batch`` (written now or before: DUPLICATE_SEQUENCE_NUMBER)."""
        partition = self._partitions.get(batch.tp)
        base = None if partition is None else partition.numbered.pop(batch, None)
        if partition is None or base is None:
            return  # numbered before the id changed, or failed already
        partition.in_flight.discard(batch)
        last = (base + len(batch) - 1) % _SEQUENCES
        # Answers come in order, but a retried batch may be acknowledged after a newer one
        # (its first answer was lost): the last acknowledged moves only forward, wrapping.
        if partition.last_acked < 0 or 0 < (last - partition.last_acked) % _SEQUENCES < _HALF:
            partition.last_acked = last

    def returned(self, batch: ProducerBatch) -> None:
        """An attempt of ``batch`` came back without it (it is retried, or fails)."""
        partition = self._partitions.get(batch.tp)
        if partition is not None:
            partition.in_flight.discard(batch)

    def failed(self, batch: ProducerBatch, reason: str) -> None:
        """``batch`` failed for good: if it was numbered under the current id and epoch, the
        broker may or may not have it, and the epoch is bumped (see the module doc)."""
        partition = self._partitions.get(batch.tp)
        if partition is None or partition.numbered.pop(batch, None) is None:
            return
        partition.in_flight.discard(batch)
        self.request_epoch_bump(reason)

    def split(self, batch: ProducerBatch, parts: Sequence[ProducerBatch]) -> None:
        """``batch`` came back refused as too large (the broker has none of it) and goes
        again as ``parts``, its records in order: they take its sequences. One numbered
        before the id changed leaves them to be numbered when they are built."""
        partition = self._partitions.get(batch.tp)
        sequence = None if partition is None else partition.numbered.pop(batch, None)
        if partition is None or sequence is None:
            return
        partition.in_flight.discard(batch)
        for part in parts:
            partition.numbered[part] = sequence
            sequence = (sequence + len(part)) % _SEQUENCES

    def gap_is_real(self, batch: ProducerBatch) -> bool:
        """Whether OUT_OF_ORDER_SEQUENCE_NUMBER on ``batch`` means a gap no retry under the
        current id and epoch fills: it starts right after the last sequence the broker
        acknowledged for its partition, or before that, behind what it acknowledged. A broker
        with no state for the id takes any first sequence, so a refused first batch (no
        leader, too few replicas) can be overtaken by the batches in flight behind it; the
        broker then never takes it (it would answer DUPLICATE_SEQUENCE_NUMBER had it the
        batch). Java's ``canRetry`` retries that batch until its delivery timeout; here it is
        a gap. (The sender sends a first batch alone, so this is the fallback.)"""
        partition = self._partitions.get(batch.tp)
        sequence = None if partition is None else partition.numbered.get(batch)
        if partition is None or sequence is None:
            return False
        behind = (partition.last_acked + 1 - sequence) % _SEQUENCES
        return behind < _HALF

    def in_flight(self, tp: TopicPartition | None = None) -> int:
        """How many batches are in flight (for ``tp``, or in all)."""
        if tp is not None:
            partition = self._partitions.get(tp)
            return 0 if partition is None else len(partition.in_flight)
        return sum(len(p.in_flight) for p in self._partitions.values())

    def next_sequence(self, tp: TopicPartition) -> int:
        partition = self._partitions.get(tp)
        return 0 if partition is None else partition.next_sequence

    def last_acked(self, tp: TopicPartition) -> int:
        """The last sequence acknowledged for ``tp`` under the current id and epoch (-1: none)."""
        partition = self._partitions.get(tp)
        return -1 if partition is None else partition.last_acked
