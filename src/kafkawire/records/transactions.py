"""read_committed: which fetched batches a consumer returns, given the aborted transactions.

A Fetch response at ``read_committed`` isolation lists, per partition, the transactions that
were aborted in the fetched range as ``(producer_id, first_offset)`` pairs. Kafka's consumer
walks the batches in offset order and keeps a set of producers whose transaction is aborted:

- before each batch with a producer id, every listed transaction whose ``first_offset`` is at or
  before the batch's last offset joins the set (its aborted batches start there);
- a transactional data batch of a producer in the set is dropped;
- an ABORT marker (a control batch whose first record is ABORT) takes its producer out of the
  set: that aborted transaction is over, and the producer's next one may commit;
- control batches themselves are never returned, at any isolation level.

Legacy message sets (magic 0 and 1) are never transactional and always pass.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from .control import ControlType, control_type
from .model import Batch, LegacyRecordBatch

__all__ = ["AbortedTransaction", "AbortedTransactionLike", "ReadCommittedFilter", "read_committed"]


class AbortedTransactionLike(Protocol):
    """An aborted transaction as the FetchResponse lists it (its ``AbortedTransaction``)."""

    @property
    def producer_id(self) -> int:
        """The producer whose transaction was aborted."""
        ...

    @property
    def first_offset(self) -> int:
        """The offset of the transaction's first record."""
        ...


@dataclass(frozen=True, slots=True)
class AbortedTransaction:
    """An aborted transaction: its producer and the offset of its first batch."""

    producer_id: int
    first_offset: int


class ReadCommittedFilter:
    """Decides, batch by batch in offset order, whether a read_committed consumer returns it.

    Feed it every batch of a partition's fetched records, in order, including the ones it
    rejects: a consumer still advances its position past those (to ``batch.next_offset``).
    """

    __slots__ = ("_aborted_producers", "_pending")

    def __init__(self, aborted_transactions: Iterable[AbortedTransactionLike] | None) -> None:
        self._pending = [(t.first_offset, t.producer_id) for t in aborted_transactions or ()]
        heapq.heapify(self._pending)
        self._aborted_producers: set[int] = set()

    def accepts(self, batch: Batch) -> bool:
        """Whether ``batch``'s records are visible at read_committed isolation."""
        if isinstance(batch, LegacyRecordBatch):
            return True
        producer_id = batch.producer_id
        if producer_id >= 0:
            pending = self._pending
            while pending and pending[0][0] <= batch.last_offset:
                self._aborted_producers.add(heapq.heappop(pending)[1])
            if batch.is_control:
                records = batch.records
                if records and control_type(records[0]) is ControlType.ABORT:
                    self._aborted_producers.discard(producer_id)
            elif batch.is_transactional and producer_id in self._aborted_producers:
                return False
        return not batch.is_control


def read_committed(
    batches: Iterable[Batch], aborted_transactions: Iterable[AbortedTransactionLike] | None
) -> Iterator[Batch]:
    """The batches of ``batches`` that a read_committed consumer returns, in order."""
    keep = ReadCommittedFilter(aborted_transactions).accepts
    return (batch for batch in batches if keep(batch))
