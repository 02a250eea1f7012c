"""Transactions of a producer with a ``transactional_id``, as Kafka's Java client runs them
before KIP-890 (transactions v2).

Where a producer's transactions stand is a :class:`TransactionState`; the moves between
states are :data:`TRANSACTION_MOVES`, Java's ``TransactionManager.State.isTransitionValid``
with KIP-939's prepared state:

======================  =============================================================
UNINITIALIZED           -> INITIALIZING (start: InitProducerId)
INITIALIZING            -> READY (a producer id and epoch), ABORTABLE_ERROR (a bump failed)
READY                   -> IN_TRANSACTION (``begin_transaction``)
IN_TRANSACTION          -> COMMITTING_TRANSACTION, ABORTING_TRANSACTION,
                        PREPARED_TRANSACTION (``prepare_transaction``), ABORTABLE_ERROR
PREPARED_TRANSACTION    -> COMMITTING_TRANSACTION, ABORTING_TRANSACTION
COMMITTING_TRANSACTION  -> READY (EndTxn), ABORTABLE_ERROR (a batch failed in the flush)
ABORTING_TRANSACTION    -> READY (EndTxn), INITIALIZING (the epoch is bumped after it)
ABORTABLE_ERROR         -> ABORTING_TRANSACTION
every state but FATAL   -> FATAL_ERROR (fenced, not authorized: close the producer)
======================  =============================================================

A call the application makes in a state that does not allow it (``commit`` with no transaction
begun, ``begin`` while one is open, ...) raises :class:`~.errors.TransactionStateError`
("cannot commit a transaction in state READY: ...") and changes nothing; any other move the
table lacks is a bug (:class:`~kafkawire.cluster.transitions.IllegalTransitionError`). A commit
or abort whose EndTxn failed without ending the producer stays COMMITTING or ABORTING and may
be called again (Java: a commit that timed out may only be retried, not aborted).

A batch that fails for good inside a transaction makes it ABORTABLE_ERROR: it can only be
aborted. If the batch had been sent, the broker may hold it or not, and its partition's
sequences may have a gap: the epoch is bumped (InitProducerId with the current id and
epoch) once the abort is done, as Java's ``epochBumpRequired`` does, so the next transaction
starts every partition at sequence 0; if the bump fails, the transaction is abortable again,
and the next abort tries it again. Java's transitions kafkawire does not make: back to
UNINITIALIZED (an idempotent producer's id reset, which :mod:`.sequences` does without a
transaction manager), INITIALIZING -> PREPARED_TRANSACTION (KIP-939's ``keepPreparedTxn``,
which kafkawire does not offer) and ABORTABLE_ERROR -> ABORTABLE_ERROR (a second failure
keeps the first as the cause).

Before the first batch of a partition goes out in a transaction, the partition is added with
AddPartitionsToTxn (v3 or older: v4+ is for brokers); offsets join with AddOffsetsToTxn and
TxnOffsetCommit; EndTxn commits or aborts. CONCURRENT_TRANSACTIONS (the previous transaction
still completing) and the coordinator's retriable errors are retried until the deadline each
call is given: ``max_block_ms`` for what the application waits on (InitProducerId at start,
offsets, commit, abort), as Java's ``max.block.ms`` bounds those calls.

Offsets carry the consumer's group metadata when given one (KIP-447, as Java's
``sendOffsetsToTransaction(offsets, ConsumerGroupMetadata)``): the group coordinator refuses
them from a member the group has moved on from (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
FENCED_INSTANCE_ID), and the transaction must then be aborted: a zombie's records never
commit with its offsets.

Two-phase commit: ``prepare`` leaves a delivered transaction open (PREPARED_TRANSACTION) and
hands back a :class:`PreparedTransaction`; :func:`end_transaction` ends it from any process
with the same producer id and epoch, as Flink's Kafka sink does. It must not call
InitProducerId: that fences the epoch which opened the transaction and aborts it. The
producer that prepared it may also commit or abort it itself, as Java's may.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping
from dataclasses import dataclass

from kafkawire.client import KafkaClient
from kafkawire.client.group_metadata import ConsumerGroupMetadata
from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.cluster.transitions import Transitions
from kafkawire.errors import (
    BrokerError,
    FencedInstanceIdError,
    IllegalGenerationError,
    InvalidProducerEpochError,
    KafkawireError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
    UnknownMemberIdError,
    error_for_code,
)
from kafkawire.messages.add_offsets_to_txn import v4 as add_offsets
from kafkawire.messages.add_partitions_to_txn import v3 as add_partitions
from kafkawire.messages.end_txn import v4 as end_txn
from kafkawire.messages.txn_offset_commit import v3 as txn_offset_commit

from .errors import TransactionStateError
from .idempotence import ProducerIdentity
from .sequences import IdState

__all__ = [
    "TRANSACTION_MOVES",
    "OffsetWithMetadata",
    "PreparedTransaction",
    "TransactionManager",
    "TransactionState",
    "end_transaction",
]

_log = logging.getLogger(__name__)
_FATAL = (ProducerFencedError, InvalidProducerEpochError, TransactionalIdAuthorizationFailedError)
_ZOMBIE_MEMBER = (IllegalGenerationError, UnknownMemberIdError, FencedInstanceIdError)
_END_TXN_LAST = 4  # before KIP-890: v5 bumps the epoch at every end, which a prepared handle cannot

OffsetWithMetadata = int | tuple[int, str]
"""A committed offset (the next to read), or ``(offset, metadata)``, as ``Consumer.commit``
takes them."""


@dataclass(frozen=True, slots=True)
class PreparedTransaction:
    """An open transaction whose records are all delivered, handed over to be ended elsewhere:
    its transactional id and the producer id and epoch that opened it. Plain data: it pickles
    and travels to another process."""

    transactional_id: str
    producer_id: int
    producer_epoch: int


async def end_transaction(
    client: KafkaClient, transaction: PreparedTransaction, *, commit: bool
) -> None:
    """EndTxn at ``transaction``'s coordinator: commit or abort it, as the producer that opened
    it would. Ending it again the same way succeeds, as Kafka answers a retried EndTxn; after
    the coordinator aborted it (its timeout passed) or a newer producer with its id fenced it,
    brokers answer ``ProducerFencedError`` or ``InvalidProducerEpochError``."""
    await _end(client.cluster, transaction, commit=commit)


async def _end(
    cluster: Cluster,
    transaction: PreparedTransaction,
    *,
    commit: bool,
    deadline: float | None = None,
) -> None:
    request = end_txn.EndTxnRequest(
        transactional_id=transaction.transactional_id,
        producer_id=transaction.producer_id,
        producer_epoch=transaction.producer_epoch,
        committed=commit,
    )
    response = await cluster.send(
        request, negotiate=True, max_version=_END_TXN_LAST, deadline=deadline
    )
    error = error_for_code(response.error_code, f"EndTxn for {transaction.transactional_id}")
    if error is not None:
        raise error


class TransactionState(enum.Enum):
    UNINITIALIZED = "the producer has not started"
    INITIALIZING = "the producer is getting its producer id"
    READY = "no transaction has begun (begin_transaction)"
    IN_TRANSACTION = "a transaction is open"
    PREPARED_TRANSACTION = (
        "the transaction was handed over (prepare_transaction): end it with end_transaction()"
        " or commit_transaction()/abort_transaction()"
    )
    COMMITTING_TRANSACTION = "a commit is under way or failed (retry commit_transaction)"
    ABORTING_TRANSACTION = "an abort is under way or failed (retry abort_transaction)"
    ABORTABLE_ERROR = "the transaction must be aborted"
    FATAL_ERROR = "the producer is fenced or unauthorized; close it"


_S = TransactionState
TRANSACTION_MOVES = Transitions(
    "transaction",
    {
        _S.UNINITIALIZED: {_S.INITIALIZING, _S.FATAL_ERROR},
        _S.INITIALIZING: {_S.READY, _S.ABORTABLE_ERROR, _S.FATAL_ERROR},
        _S.READY: {_S.IN_TRANSACTION, _S.FATAL_ERROR},
        _S.IN_TRANSACTION: {
            _S.PREPARED_TRANSACTION,
            _S.COMMITTING_TRANSACTION,
            _S.ABORTING_TRANSACTION,
            _S.ABORTABLE_ERROR,
            _S.FATAL_ERROR,
        },
        _S.PREPARED_TRANSACTION: {
            _S.COMMITTING_TRANSACTION,
            _S.ABORTING_TRANSACTION,
            _S.FATAL_ERROR,
        },
        _S.COMMITTING_TRANSACTION: {_S.READY, _S.ABORTABLE_ERROR, _S.FATAL_ERROR},
        _S.ABORTING_TRANSACTION: {_S.READY, _S.INITIALIZING, _S.FATAL_ERROR},
        _S.ABORTABLE_ERROR: {_S.ABORTING_TRANSACTION, _S.FATAL_ERROR},
        _S.FATAL_ERROR: set(),
    },
)


class TransactionManager:
    """The state of one transactional producer's transactions."""

    def __init__(self, cluster: Cluster, identity: ProducerIdentity) -> None:
        assert identity.transactional_id is not None
        self._cluster = cluster
        self._identity = identity
        self.transactional_id: str = identity.transactional_id
        self.state = _S.UNINITIALIZED
        self._partitions: set[TopicPartition] = set()
        self._offsets_added = False
        self._error: BaseException | None = None  # why it is ABORTABLE_ERROR or FATAL_ERROR

    # --- moves ---------------------------------------------------------------------------

    def _move(self, target: TransactionState, error: BaseException | None = None) -> None:
        """A move the producer makes itself: one the table lacks is a bug."""
        self.state = TRANSACTION_MOVES.check(self.state, target)
        self._error = error

    def _enter(self, target: TransactionState, action: str) -> None:
        """The move an application's call makes; refused, naming why, where the table
        does not allow it."""
        if not TRANSACTION_MOVES.allows(self.state, target):
            raise self._state_error(action)
        self._move(target)

    def _require(self, state: TransactionState, action: str) -> None:
        if self.state is not state:
            raise self._state_error(action)

    def _state_error(self, action: str) -> TransactionStateError:
        state = self.state
        why = state.value
        if self._error is not None:
            why = f"{why} ({self._error})"
        error = TransactionStateError(f"cannot {action} in state {state.name}: {why}")
        error.__cause__ = self._error
        return error

    def _fatal(self, error: BaseException) -> None:
        if self.state is not _S.FATAL_ERROR:
            self._move(_S.FATAL_ERROR, error)

    # --- calls -----------------------------------------------------------------------------

    async def initialize(self, deadline: float) -> None:
        """InitProducerId at the transaction coordinator: fences older producers with this id
        and aborts a transaction they left open."""
        self._move(_S.INITIALIZING)
        await self._init_producer_id(deadline)

    async def _init_producer_id(self, deadline: float) -> None:
        """InitProducerId (a first one, or a bump of the current epoch), then READY. Failed
        for a reason that may pass, the transaction must be aborted, which tries again."""
        try:
            await self._identity.initialize(deadline=deadline)
        except _FATAL as error:
            self._fatal(error)
            raise
        except BaseException as error:  # cancelled too: nothing else would leave INITIALIZING
            self._move(_S.ABORTABLE_ERROR, error)
            raise
        self._move(_S.READY)

    def not_added(self, partitions: set[TopicPartition]) -> set[TopicPartition]:
        """Those of ``partitions`` not in the transaction yet (their batches wait)."""
        return partitions - self._partitions

    def begin(self) -> None:
        self._enter(_S.IN_TRANSACTION, "begin a transaction")
        self._partitions.clear()
        self._offsets_added = False

    def failed(self, error: BaseException) -> None:
        """A batch of the transaction failed for good: it can only be aborted now (once
        aborting, it is being aborted anyway; a second failure keeps the first as the cause)."""
        if isinstance(error, _FATAL):
            self._fatal(error)
        elif self.state in (_S.IN_TRANSACTION, _S.COMMITTING_TRANSACTION):
            self._move(_S.ABORTABLE_ERROR, error)

    def check_sendable(self) -> None:
        """Raise unless records may be sent now (a transaction is open and healthy)."""
        if self.state is not _S.IN_TRANSACTION:
            raise self._state_error("send records")

    async def add_partitions(self, partitions: set[TopicPartition], deadline: float) -> None:
        """AddPartitionsToTxn, retried until ``deadline`` (``time.monotonic()``)."""
        new = partitions - self._partitions
        if not new:
            return
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(new):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        request = add_partitions.AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=self.transactional_id,
            v3_and_below_producer_id=self._identity.producer_id,
            v3_and_below_producer_epoch=self._identity.epoch,
            v3_and_below_topics=tuple(
                add_partitions.AddPartitionsToTxnTopic(name=t, partitions=tuple(p))
                for t, p in by_topic.items()
            ),
        )

        async def attempt() -> None:
            response = await self._cluster.send(request, negotiate=True, max_version=3, retry=False)
            errors = [
                error_for_code(
                    p.partition_error_code, f"AddPartitionsToTxn {t.name}/{p.partition_index}"
                )
                for t in response.results_by_topic_v3_and_below
                for p in t.results_by_partition
            ]
            self._raise_first(errors)

        await self._cluster.call("AddPartitionsToTxn", attempt, deadline=deadline)
        self._partitions |= new

    async def send_offsets(
        self,
        offsets: Mapping[TopicPartition, OffsetWithMetadata],
        group: ConsumerGroupMetadata,
        deadline: float,
    ) -> None:
        """Commit ``offsets`` (the next offset to read, per partition, or ``(offset,
        metadata)``) for ``group`` as part of the transaction, until ``deadline``."""
        self.check_sendable()
        identity = self._identity
        if not self._offsets_added:
            add = add_offsets.AddOffsetsToTxnRequest(
                transactional_id=self.transactional_id,
                producer_id=identity.producer_id,
                producer_epoch=identity.epoch,
                group_id=group.group_id,
            )
            response = await self._cluster.send(add, negotiate=True, deadline=deadline)
            self._check(response.error_code, "AddOffsetsToTxn")
            self._offsets_added = True
        by_topic: dict[str, list[txn_offset_commit.TxnOffsetCommitRequestPartition]] = {}
        for tp, value in sorted(offsets.items()):
            offset, metadata = value if isinstance(value, tuple) else (value, "")
            by_topic.setdefault(tp.topic, []).append(
                txn_offset_commit.TxnOffsetCommitRequestPartition(
                    partition_index=tp.partition,
                    committed_offset=offset,
                    committed_metadata=metadata,
                )
            )
        commit = txn_offset_commit.TxnOffsetCommitRequest(
            transactional_id=self.transactional_id,
            group_id=group.group_id,
            producer_id=identity.producer_id,
            producer_epoch=identity.epoch,
            generation_id=group.generation_id,
            member_id=group.member_id,
            group_instance_id=group.group_instance_id,
            topics=tuple(
                txn_offset_commit.TxnOffsetCommitRequestTopic(name=t, partitions=tuple(p))
                for t, p in by_topic.items()
            ),
        )
        response = await self._cluster.send(
            commit, negotiate=True, max_version=3, deadline=deadline
        )
        member = f"member {group.member_id!r} of generation {group.generation_id}"
        errors = [
            error_for_code(
                p.error_code, f"TxnOffsetCommit {t.name}/{p.partition_index} for {member}"
            )
            for t in response.topics
            for p in t.partitions
        ]
        try:
            self._raise_first(errors)
        except _ZOMBIE_MEMBER as error:
            # Java's TxnOffsetCommitHandler: the group moved on from this member; what the
            # transaction wrote was read by a zombie, so it must not commit.
            self.failed(error)
            raise

    def begin_commit(self) -> None:
        """Refuse new records, before the flush a commit waits for (again after a commit
        that failed: it is retried)."""
        if self.state is not _S.COMMITTING_TRANSACTION:
            self._enter(_S.COMMITTING_TRANSACTION, "commit a transaction")

    def begin_abort(self) -> None:
        """Refuse new records, before the transaction's batches are dropped (again after an
        abort that failed: it is retried)."""
        if self.state is not _S.ABORTING_TRANSACTION:
            self._enter(_S.ABORTING_TRANSACTION, "abort a transaction")

    async def end(self, *, commit: bool, deadline: float) -> None:
        """EndTxn, after :meth:`begin_commit` and the flush, or :meth:`begin_abort` and the
        batches dropped; the epoch is bumped after an abort if a batch may have left a gap."""
        # A batch may have failed in the flush, or for good while in-flight ones came back.
        if commit:
            self._require(_S.COMMITTING_TRANSACTION, "commit a transaction")
        else:
            self._require(_S.ABORTING_TRANSACTION, "abort a transaction")
        if self._partitions or self._offsets_added:
            try:
                await _end(self._cluster, self._handle(), commit=commit, deadline=deadline)
            except _FATAL as error:
                self._fatal(error)
                raise
        _log.debug("transaction %s %s", self.transactional_id, "committed" if commit else "aborted")
        self._partitions.clear()
        self._offsets_added = False
        if commit or self._identity.sequences.state is not IdState.BUMP_DUE:
            self._move(_S.READY)
            return
        self._move(_S.INITIALIZING)
        await self._init_producer_id(deadline)

    def prepare(self) -> PreparedTransaction:
        """Hand the transaction over, open, to be ended by :func:`end_transaction` (the caller
        has flushed)."""
        self._require(_S.IN_TRANSACTION, "prepare a transaction")
        if not (self._partitions or self._offsets_added):
            raise TransactionStateError(
                "cannot prepare a transaction with no records and no offsets: the coordinator "
                "has nothing to end"
            )
        self._move(_S.PREPARED_TRANSACTION)
        return self._handle()

    def _handle(self) -> PreparedTransaction:
        return PreparedTransaction(
            self.transactional_id, self._identity.producer_id, self._identity.epoch
        )

    def _check(self, code: int, what: str) -> None:
        self._raise_first([error_for_code(code, f"{what} for {self.transactional_id}")])

    def _raise_first(self, errors: list[BrokerError | None]) -> None:
        error: KafkawireError | None = next((e for e in errors if e is not None), None)
        if error is None:
            return
        if isinstance(error, _FATAL):
            self._fatal(error)
        raise error
