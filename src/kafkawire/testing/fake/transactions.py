"""The transaction coordinator: producer ids, transactional ids and their transactions.

Kafka's ``TransactionCoordinator`` with transaction version 1 (the fake finalizes no
``transaction.version`` feature, so clients add partitions with AddPartitionsToTxn and epochs
move only at InitProducerId). Markers are written at once, so the PREPARE states are never
seen and CONCURRENT_TRANSACTIONS is answered only where Kafka answers it on purpose.

States and moves (``_MOVES``): EMPTY -> ONGOING (the first partition or group added);
ONGOING -> COMPLETE_COMMIT | COMPLETE_ABORT (EndTxn, a timeout, or a fencing InitProducerId);
COMPLETE_* -> ONGOING (the next transaction). Rules, as Kafka applies them:

- InitProducerId without a transactional id: a new producer id at epoch 0, always.
- With one: a new id starts at epoch 0; a known one is bumped an epoch (a new producer id at
  epoch 0 once the epoch would pass 32766). If it has a transaction open, that transaction is
  aborted at the bumped epoch (fencing the old producer) and the answer is
  CONCURRENT_TRANSACTIONS, so the retry bumps again. Given a producer id and epoch (KIP-360),
  they must be the current ones (then bumped) or the last (a retry: the current returned);
  else PRODUCER_FENCED.
- Every other request names the id, producer id and epoch: an unknown id or another producer
  id is INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED (handlers answer
  INVALID_PRODUCER_EPOCH to versions older than KIP-588).
- EndTxn ends an ONGOING transaction: markers to every partition, and on commit the offsets
  of TxnOffsetCommit go to the group coordinator; the same EndTxn again (a retry) succeeds; the
  other outcome, or EndTxn with nothing open, is INVALID_TXN_STATE.
- A transaction open longer than its timeout is aborted at a bumped epoch (Kafka checks every
  10 s; here the timer fires on time, on the cluster's clock: :mod:`.clock`).
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from .clock import Timers
from .codes import Error
from .state import ClusterState

__all__ = ["TransactionCoordinator", "TxnState"]

logger = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
Offset = tuple[int, int, str | None]  # (offset, leader epoch, metadata)
_EXHAUSTED_EPOCH = 32767 - 1
_COORDINATOR_EPOCH = 0


class TxnState(enum.Enum):
    EMPTY = "Empty"
    ONGOING = "Ongoing"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"


_MOVES: dict[TxnState, frozenset[TxnState]] = {
    TxnState.EMPTY: frozenset({TxnState.ONGOING}),
    TxnState.ONGOING: frozenset({TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT}),
    TxnState.COMPLETE_COMMIT: frozenset({TxnState.ONGOING}),
    TxnState.COMPLETE_ABORT: frozenset({TxnState.ONGOING}),
}


@dataclass
class Transaction:
    transactional_id: str
    producer_id: int
    epoch: int
    timeout_ms: int
    last_epoch: int = -1
    state: TxnState = TxnState.EMPTY
    partitions: set[TopicPartition] = field(default_factory=set)
    offsets: dict[str, dict[TopicPartition, Offset]] = field(default_factory=dict)

    def move(self, state: TxnState) -> None:
        if state not in _MOVES[self.state]:
            raise AssertionError(f"transaction {self.transactional_id}: {self.state} -> {state}")
        self.state = state


class TransactionCoordinator:
    def __init__(
        self,
        cluster: ClusterState,
        commit_offsets: Callable[[str, Mapping[TopicPartition, Offset]], None],
    ) -> None:
        self.cluster = cluster
        self._commit_offsets = commit_offsets
        self.transactions: dict[str, Transaction] = {}
        self.timers = Timers(cluster.now)
        self._next_producer_id = 1000

    def new_producer_id(self) -> int:
        self._next_producer_id += 1
        return self._next_producer_id

    def close(self) -> None:
        self.timers.close()

    # -- InitProducerId ------------------------------------------------------------------------

    def init_producer_id(
        self,
        transactional_id: str | None,
        timeout_ms: int,
        producer_id: int = -1,
        epoch: int = -1,
    ) -> tuple[Error, int, int]:
        """(error, producer id, epoch) for an InitProducerId (see the module rules)."""
        if transactional_id is None:
            return Error.NONE, self.new_producer_id(), 0
        if not 0 < timeout_ms <= self.cluster.config.transaction_max_timeout_ms:
            return Error.INVALID_TRANSACTION_TIMEOUT, -1, -1
        txn = self.transactions.get(transactional_id)
        if txn is None:
            txn = Transaction(transactional_id, self.new_producer_id(), 0, timeout_ms)
            self.transactions[transactional_id] = txn
            return Error.NONE, txn.producer_id, txn.epoch
        if producer_id >= 0:
            if producer_id != txn.producer_id:
                return Error.PRODUCER_FENCED, -1, -1
            if epoch == txn.last_epoch and epoch != txn.epoch:
                return Error.NONE, txn.producer_id, txn.epoch  # a retry of the last bump
            if epoch != txn.epoch:
                return Error.PRODUCER_FENCED, -1, -1
        txn.timeout_ms = timeout_ms
        if txn.state is TxnState.ONGOING:
            self._bump(txn)
            self._end(txn, committed=False)
            return Error.CONCURRENT_TRANSACTIONS, -1, -1
        self._bump(txn)
        return Error.NONE, txn.producer_id, txn.epoch

    def _bump(self, txn: Transaction) -> None:
        if txn.epoch >= _EXHAUSTED_EPOCH:
            txn.producer_id, txn.epoch, txn.last_epoch = self.new_producer_id(), 0, -1
        else:
            txn.last_epoch, txn.epoch = txn.epoch, txn.epoch + 1

    # -- within a transaction ------------------------------------------------------------------

    def check(self, transactional_id: str, producer_id: int, epoch: int) -> Error:
        """Whether a request names the current producer of ``transactional_id``."""
        txn = self.transactions.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return Error.INVALID_PRODUCER_ID_MAPPING
        if txn.epoch != epoch:
            return Error.PRODUCER_FENCED
        return Error.NONE

    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        epoch: int,
        partitions: Iterable[TopicPartition],
        *,
        verify_only: bool = False,
    ) -> dict[TopicPartition, Error]:
        """Each partition's answer to AddPartitionsToTxn (one error for all when the producer
        is refused; UNKNOWN_TOPIC_OR_PARTITION where a partition does not exist, and
        OPERATION_NOT_ATTEMPTED for the others then)."""
        wanted = list(partitions)
        error = self.check(transactional_id, producer_id, epoch)
        if error is not Error.NONE:
            return dict.fromkeys(wanted, error)
        txn = self.transactions[transactional_id]
        if verify_only:
            return {
                tp: Error.NONE
                if txn.state is TxnState.ONGOING and tp in txn.partitions
                else Error.INVALID_TXN_STATE
                for tp in wanted
            }
        missing = {tp for tp in wanted if self.cluster.partition(*tp) is None}
        if missing:
            return {
                tp: Error.UNKNOWN_TOPIC_OR_PARTITION
                if tp in missing
                else Error.OPERATION_NOT_ATTEMPTED
                for tp in wanted
            }
        self._begin(txn)
        txn.partitions.update(wanted)
        return dict.fromkeys(wanted, Error.NONE)

    def add_offsets(self, transactional_id: str, producer_id: int, epoch: int, group: str) -> Error:
        error = self.check(transactional_id, producer_id, epoch)
        if error is Error.NONE:
            txn = self.transactions[transactional_id]
            self._begin(txn)
            txn.offsets.setdefault(group, {})
        return error

    def verify_offsets(
        self, transactional_id: str, producer_id: int, epoch: int, group: str
    ) -> Error:
        """Whether a TxnOffsetCommit may hold offsets for ``group`` (KIP-890's verification,
        which Kafka runs before the group's checks): the current producer, in a transaction
        that added the group (AddOffsetsToTxn)."""
        error = self.check(transactional_id, producer_id, epoch)
        if error is not Error.NONE:
            return error
        txn = self.transactions[transactional_id]
        if txn.state is not TxnState.ONGOING or group not in txn.offsets:
            return Error.INVALID_TXN_STATE
        return Error.NONE

    def hold_offsets(
        self, transactional_id: str, group: str, offsets: Mapping[TopicPartition, Offset]
    ) -> None:
        """Keep a verified TxnOffsetCommit's offsets until the transaction ends."""
        self.transactions[transactional_id].offsets[group].update(offsets)

    def pending_offsets(self, group: str) -> frozenset[TopicPartition]:
        return frozenset(
            tp
            for txn in self.transactions.values()
            if txn.state is TxnState.ONGOING
            for tp in txn.offsets.get(group, {})
        )

    def _begin(self, txn: Transaction) -> None:
        if txn.state is TxnState.ONGOING:
            return
        txn.move(TxnState.ONGOING)
        txn.partitions.clear()
        txn.offsets.clear()
        self.timers.schedule(txn.transactional_id, txn.timeout_ms, lambda: self._time_out(txn))

    def _time_out(self, txn: Transaction) -> None:
        if txn.state is TxnState.ONGOING:
            logger.info("transaction %s timed out: aborted", txn.transactional_id)
            self._bump(txn)
            self._end(txn, committed=False)

    # -- EndTxn --------------------------------------------------------------------------------

    def end(self, transactional_id: str, producer_id: int, epoch: int, *, committed: bool) -> Error:
        error = self.check(transactional_id, producer_id, epoch)
        if error is not Error.NONE:
            return error
        txn = self.transactions[transactional_id]
        if txn.state is TxnState.ONGOING:
            self._end(txn, committed=committed)
            return Error.NONE
        done = TxnState.COMPLETE_COMMIT if committed else TxnState.COMPLETE_ABORT
        return Error.NONE if txn.state is done else Error.INVALID_TXN_STATE

    def _end(self, txn: Transaction, *, committed: bool) -> None:
        self.timers.cancel(txn.transactional_id)
        timestamp = int(time.time() * 1000)
        for topic, index in sorted(txn.partitions):
            partition = self.cluster.partition(topic, index)
            if partition is None:
                continue  # deleted since
            partition.log.append_marker(
                txn.producer_id,
                txn.epoch,
                committed=committed,
                coordinator_epoch=_COORDINATOR_EPOCH,
                leader_epoch=partition.leader_epoch,
                timestamp=timestamp,
            )
        if committed:
            for group, offsets in txn.offsets.items():
                if offsets:
                    self._commit_offsets(group, offsets)
        txn.move(TxnState.COMPLETE_COMMIT if committed else TxnState.COMPLETE_ABORT)
        self.cluster.changes.notify()

    # -- Produce -------------------------------------------------------------------------------

    def check_produce(self, producer_id: int, epoch: int, partition: TopicPartition) -> Error:
        """Kafka's check (KIP-890) that a transactional batch belongs to an open transaction
        that holds its partition."""
        for txn in self.transactions.values():
            if txn.producer_id == producer_id:
                if epoch < txn.epoch:
                    return Error.INVALID_PRODUCER_EPOCH
                if txn.state is TxnState.ONGOING and partition in txn.partitions:
                    return Error.NONE
                break
        return Error.INVALID_TXN_STATE
