"""One partition's log: record batches as bytes, with the offsets and epochs Kafka keeps beside.

Invariants (Kafka's, for a replica that is always in sync):

- Batches are kept as the client sent them, with the broker's two stamps written in: the base
  offset and the partition leader epoch, both outside the crc (so the crc still holds). The
  high watermark is the log end offset: every replica is in sync at once.
- The last stable offset is the first offset of the oldest transaction still open on the
  partition (the high watermark when none is); read_committed readers stop there.
- Aborted transactions are indexed (producer id, first offset, marker offset) as Kafka's
  transaction index does, for Fetch at read_committed.
- The leader epoch cache holds (epoch, start offset) for each leadership: a new leader's epoch
  starts at the log end offset when it takes over (Kafka's ``maybeAssignEpochStartOffset``),
  whether or not it ever writes. OffsetForLeaderEpoch and diverging epochs are answered from
  it, by Kafka's ``LeaderEpochFileCache.endOffsetFor``.
- Reads return whole batches from the one holding the offset asked, cut at the byte limit as
  Kafka cuts a file slice (a trailing batch may come cut short: readers drop it), except that
  the first batch comes whole when the reader must make progress (KIP-74).
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass

from kafkawire.records import (
    ControlType,
    EndTransactionMarker,
    Record,
    RecordBatch,
    decode_batches,
    end_transaction_batch,
)

from .producer_state import BatchMetadata, ProducerStates, last_sequence

__all__ = ["AbortedTxn", "Appended", "PartitionLog", "StoredBatch"]

_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")
_LEADER_EPOCH_AT = 12
NO_OFFSET = -1


@dataclass(frozen=True, slots=True)
class StoredBatch:
    base_offset: int
    last_offset: int
    leader_epoch: int
    data: bytes
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    first_seq: int
    transactional: bool
    marker: EndTransactionMarker | None  # for the control batches a coordinator writes


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int


@dataclass(frozen=True, slots=True)
class Appended:
    """Where a batch went: its base offset, or the original's for a duplicate."""

    base_offset: int
    duplicate: bool = False


def _stored(
    batch: RecordBatch, base_offset: int, last_offset: int, leader_epoch: int, data: bytes
) -> StoredBatch:
    """A client's batch as the log keeps it, at the offsets and epoch given."""
    return StoredBatch(
        base_offset=base_offset,
        last_offset=last_offset,
        leader_epoch=leader_epoch,
        data=data,
        max_timestamp=batch.max_timestamp,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        first_seq=batch.base_sequence,
        transactional=batch.is_transactional,
        marker=None,
    )


class PartitionLog:
    def __init__(self, leader_epoch: int = 0) -> None:
        self.batches: list[StoredBatch] = []
        self._last_offsets: list[int] = []
        self.log_start_offset = 0
        self.end_offset = 0
        self.epochs: list[tuple[int, int]] = [(leader_epoch, 0)]
        self.aborted: list[AbortedTxn] = []
        self.open_txns: dict[int, int] = {}  # producer id -> first offset
        self.producers = ProducerStates()

    # -- offsets -------------------------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        return self.end_offset

    @property
    def last_stable_offset(self) -> int:
        return min(self.open_txns.values(), default=self.end_offset)

    # -- writing -------------------------------------------------------------------------------

    def append(self, batch: RecordBatch, raw: bytes, leader_epoch: int) -> Appended:
        """Write one validated client batch, after the idempotence checks (module rules)."""
        count = batch.last_offset_delta + 1
        producer_id = batch.producer_id
        first_seq = batch.base_sequence
        last_seq = last_sequence(first_seq, batch.last_offset_delta)
        if producer_id >= 0:
            duplicate = self.producers.duplicate_of(
                producer_id, batch.producer_epoch, first_seq, last_seq
            )
            if duplicate is not None:
                return Appended(duplicate.first_offset, duplicate=True)
            self.producers.check_data(
                producer_id, batch.producer_epoch, first_seq, transactional=batch.is_transactional
            )
        base = self.end_offset
        stored = _stored(
            batch, base, base + count - 1, leader_epoch, _stamped(raw, base, leader_epoch)
        )
        self._store(stored)
        if producer_id >= 0:
            self._record_producer(stored, last_seq)
        return Appended(base)

    def append_unchecked(self, batch: RecordBatch, raw: bytes) -> None:
        """Write ``raw`` as it is (no stamps, no checks): where it ends is the last offset its
        header or its records name, whichever is later (a crafted batch may disagree)."""
        if batch.base_offset < self.end_offset:
            raise ValueError(
                f"a batch at offset {batch.base_offset} cannot follow the log end offset "
                f"{self.end_offset}"
            )
        last = max(batch.last_offset, *(record.offset for record in batch.records))
        self._store(_stored(batch, batch.base_offset, last, batch.partition_leader_epoch, raw))

    def append_marker(
        self,
        producer_id: int,
        producer_epoch: int,
        *,
        committed: bool,
        coordinator_epoch: int,
        leader_epoch: int,
        timestamp: int,
    ) -> int:
        """Write a COMMIT or ABORT marker for the producer; its offset."""
        self.producers.check_marker(producer_id, producer_epoch, coordinator_epoch)
        kind = ControlType.COMMIT if committed else ControlType.ABORT
        marker = EndTransactionMarker(kind, coordinator_epoch)
        offset = self.end_offset
        raw = end_transaction_batch(
            marker, producer_id=producer_id, producer_epoch=producer_epoch, timestamp=timestamp
        )
        self._store(
            StoredBatch(
                base_offset=offset,
                last_offset=offset,
                leader_epoch=leader_epoch,
                data=_stamped(raw, offset, leader_epoch),
                max_timestamp=timestamp,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                first_seq=-1,
                transactional=True,
                marker=marker,
            )
        )
        self._record_marker(producer_id, producer_epoch, marker, offset)
        return offset

    def _store(self, stored: StoredBatch) -> None:
        self.batches.append(stored)
        self._last_offsets.append(stored.last_offset)
        self.end_offset = stored.last_offset + 1

    def _record_producer(self, stored: StoredBatch, last_seq: int) -> None:
        metadata = BatchMetadata(stored.first_seq, last_seq, stored.base_offset, stored.last_offset)
        began = self.producers.record_data(
            stored.producer_id,
            stored.producer_epoch,
            metadata,
            transactional=stored.transactional,
        )
        if began:
            self.open_txns[stored.producer_id] = stored.base_offset

    def _record_marker(
        self, producer_id: int, epoch: int, marker: EndTransactionMarker, offset: int
    ) -> None:
        first = self.producers.record_marker(producer_id, epoch, marker.coordinator_epoch)
        self.open_txns.pop(producer_id, None)
        if not marker.committed:
            self.aborted.append(AbortedTxn(producer_id, offset if first is None else first, offset))

    # -- reading -------------------------------------------------------------------------------

    def _index_of(self, offset: int) -> int:
        """The index of the first batch that holds ``offset`` or comes after it."""
        return bisect.bisect_left(self._last_offsets, offset)

    def read(self, offset: int, max_bytes: int, upper: int, *, min_one: bool) -> tuple[bytes, int]:
        """The batches from the one holding ``offset``, below ``upper``, in at most
        ``max_bytes`` (the first batch whole if ``min_one``; see the module invariants); and
        the offset after them (of the first batch not wholly returned)."""
        chunks: list[bytes] = []
        size = 0
        limit = max_bytes
        after = min(upper, self.end_offset)
        for stored in self.batches[self._index_of(offset) :]:
            if stored.base_offset >= upper:
                break
            if not chunks and min_one:
                limit = max(limit, len(stored.data))
            if size + len(stored.data) > limit:
                chunks.append(stored.data[: limit - size])
                after = stored.base_offset
                break
            chunks.append(stored.data)
            size += len(stored.data)
        return b"".join(chunks), after

    def whole_batches(self, offset: int, max_bytes: int, upper: int) -> list[StoredBatch]:
        """The batches from the one holding ``offset``, below ``upper``, as many whole ones as
        fit in ``max_bytes`` (the first always): what a share fetch reads and acquires from."""
        found: list[StoredBatch] = []
        size = 0
        for stored in self.batches[self._index_of(offset) :]:
            if stored.base_offset >= upper or (found and size + len(stored.data) > max_bytes):
                break
            found.append(stored)
            size += len(stored.data)
        return found

    def aborted_between(self, start: int, end: int) -> list[AbortedTxn]:
        """The aborted transactions a read of ``[start, end)`` overlaps (Kafka's rule)."""
        return [t for t in self.aborted if t.last_offset >= start and t.first_offset < end]

    # -- leader epochs -------------------------------------------------------------------------

    @property
    def latest_epoch(self) -> int:
        return self.epochs[-1][0]

    def assign_epoch(self, epoch: int) -> None:
        """A new leadership: ``epoch`` starts at the log end offset."""
        if self.epochs and self.epochs[-1][1] == self.end_offset:
            self.epochs.pop()  # an epoch that never wrote ends where the next starts
        self.epochs.append((epoch, self.end_offset))

    def epoch_of(self, offset: int) -> int:
        """The epoch whose range holds ``offset`` (-1 before the first)."""
        found = -1
        for epoch, start in self.epochs:
            if start > offset:
                break
            found = epoch
        return found

    def end_offset_for(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) for an OffsetForLeaderEpoch of ``epoch``, by Kafka's rule: the
        largest epoch at most ``epoch`` and where the next one starts; (-1, -1) if the epoch is
        newer than any known."""
        if epoch == self.latest_epoch:
            return epoch, self.end_offset
        higher = next(((e, s) for e, s in self.epochs if e > epoch), None)
        if higher is None or epoch < 0:
            return -1, NO_OFFSET
        floor = [e for e, _ in self.epochs if e <= epoch]
        return (floor[-1] if floor else epoch), higher[1]

    # -- timestamps ----------------------------------------------------------------------------

    def offset_for_timestamp(self, timestamp: int, upper: int) -> tuple[int, int, int] | None:
        """(timestamp, offset, epoch) of the first record at or after ``timestamp`` below
        ``upper``, or None."""
        for stored in self.batches[self._index_of(self.log_start_offset) :]:
            if stored.base_offset >= upper:
                break
            if stored.marker is not None or stored.max_timestamp < timestamp:
                continue
            for record in _records(stored):
                if record.offset >= self.log_start_offset and record.timestamp >= timestamp:
                    return record.timestamp, record.offset, stored.leader_epoch
        return None

    def max_timestamp(self, upper: int) -> tuple[int, int, int] | None:
        """(timestamp, offset, epoch) of the first record with the largest timestamp."""
        best: tuple[int, int, int] | None = None
        for stored in self.batches[self._index_of(self.log_start_offset) :]:
            if stored.base_offset >= upper:
                break
            if stored.marker is not None:
                continue
            for record in _records(stored):
                if best is None or record.timestamp > best[0]:
                    best = (record.timestamp, record.offset, stored.leader_epoch)
        return best

    # -- removing ------------------------------------------------------------------------------

    def delete_before(self, offset: int) -> None:
        """DeleteRecords: the log now starts at ``offset`` (at most the high watermark)."""
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        keep = self._index_of(offset)
        del self.batches[:keep]
        del self._last_offsets[:keep]
        self.aborted = [t for t in self.aborted if t.last_offset >= offset]
        self.producers.forget_before(offset)
        # Kafka's truncateFromStart: epochs wholly before the start go, the last one starts there.
        before = [(e, s) for e, s in self.epochs if s <= offset]
        after = [(e, s) for e, s in self.epochs if s > offset]
        self.epochs = [(before[-1][0], offset), *after] if before else after

    def truncate(self, offset: int) -> None:
        """Cut the log at the batch holding ``offset`` (Kafka truncates whole batches; below
        the log start it empties the log and starts it at ``offset``), and rebuild what the
        cut batches told: producers, transactions, the epochs that began after the cut."""
        self.log_start_offset = min(self.log_start_offset, offset)
        kept = self.batches[: self._index_of(offset)]
        end = kept[-1].last_offset + 1 if kept else self.log_start_offset
        epochs = [(e, s) for e, s in self.epochs if s < end] or [(self.epochs[0][0], end)]
        self.batches, self._last_offsets = [], []
        self.aborted, self.open_txns, self.producers = [], {}, ProducerStates()
        for stored in kept:
            self._store(stored)
            if stored.marker is not None:
                self._record_marker(
                    stored.producer_id, stored.producer_epoch, stored.marker, stored.base_offset
                )
            elif stored.producer_id >= 0:
                delta = stored.last_offset - stored.base_offset
                self._record_producer(stored, last_sequence(stored.first_seq, delta))
        self.end_offset = end
        self.epochs = epochs


def _stamped(raw: bytes, base_offset: int, leader_epoch: int) -> bytes:
    data = bytearray(raw)
    _BASE_OFFSET.pack_into(data, 0, base_offset)
    _LEADER_EPOCH.pack_into(data, _LEADER_EPOCH_AT, leader_epoch)
    return bytes(data)


def _records(stored: StoredBatch) -> list[Record]:
    return [r for batch in decode_batches(stored.data) for r in batch.records]
