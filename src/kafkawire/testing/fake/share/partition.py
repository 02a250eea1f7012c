"""One share partition: a topic partition as one share group reads it (Kafka's
``SharePartition``).

Invariants, as Kafka keeps them:

- The share-partition start offset (SPSO) is the first offset not yet in a terminal state;
  everything before it is done. The end is the first offset never fetched: every offset from
  the start to the end is in flight, with a state, a delivery count and (while acquired) its
  member and lock.
- A record is acquired by at most one member at a time; only that member may acknowledge it,
  and only while it is acquired (else INVALID_RECORD_STATE).
- One acknowledgement of a partition applies all of its batches or none (Kafka rolls the
  whole request back on the first error).
- The start moves over acknowledged and archived records as soon as they reach it. The log's
  start moving past it (DeleteRecords) archives the available records it passed; acquired ones
  are archived when they come back.
- A new leader knows only what was persisted: records acquired when the leadership moved are
  available again, their last delivery not counted (Kafka persists acknowledgements, releases
  and expiries, not acquisitions).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from kafkawire.testing.fake.codes import Error

from .records import AcknowledgeType, InFlight, RecordState

__all__ = ["AckBatch", "AckFailure", "InFlightRecord", "SharePartition", "SharePartitionState"]


@dataclass(frozen=True, slots=True)
class AckBatch:
    """One acknowledgement batch: ``types`` holds one type for every offset from ``first`` to
    ``last``, or one per offset."""

    first: int
    last: int
    types: tuple[AcknowledgeType, ...]

    def type_of(self, offset: int) -> AcknowledgeType:
        return self.types[0] if len(self.types) == 1 else self.types[offset - self.first]


@dataclass(frozen=True, slots=True)
class AckFailure:
    """Why an acknowledgement was refused (and nothing of it applied)."""

    error: Error
    message: str


@dataclass(frozen=True, slots=True)
class InFlightRecord:
    """What a test sees of one in-flight offset (:meth:`FakeCluster.share_partition`)."""

    state: RecordState
    delivery_count: int
    member_id: str  # "" unless acquired


@dataclass(frozen=True, slots=True)
class SharePartitionState:
    """A share partition as a test sees it: its start offset (SPSO), its end (the first offset
    never fetched), and each in-flight offset from the start on."""

    start_offset: int
    end_offset: int
    records: Mapping[int, InFlightRecord]


class SharePartition:
    """The in-flight records of one (share group, topic partition); see the module rules."""

    def __init__(self, start_offset: int, leader_epoch: int) -> None:
        self.start_offset = start_offset
        self.end_offset = start_offset
        self.leader_epoch = leader_epoch
        # Offset -> its state, in offset order (new offsets are only ever appended).
        self._records: dict[int, InFlight] = {}

    # -- reading ------------------------------------------------------------------------------

    def next_fetch_offset(self) -> int:
        """The first offset a fetch may acquire: the first available one, else the end."""
        for offset, record in self._records.items():
            if offset >= self.start_offset and record.state is RecordState.AVAILABLE:
                return offset
        return self.end_offset

    def is_available(self, offset: int) -> bool:
        """Whether a fetch may acquire ``offset`` (available, or never fetched)."""
        if offset >= self.end_offset:
            return True
        record = self._records.get(offset)
        return record is not None and record.state is RecordState.AVAILABLE

    def delivery_complete_count(self) -> int:
        """Records from the start on that are acknowledged or archived (KIP-1226's lag)."""
        return sum(
            1 for o, r in self._records.items() if o >= self.start_offset and r.state.terminal
        )

    def snapshot(self) -> SharePartitionState:
        records = {
            offset: InFlightRecord(record.state, record.delivery_count, record.member_id)
            for offset, record in self._records.items()
        }
        return SharePartitionState(self.start_offset, self.end_offset, records)

    # -- acquiring ----------------------------------------------------------------------------

    def acquire(self, offsets: Iterable[int], member_id: str, lock: int) -> list[tuple[int, int]]:
        """Acquire ``offsets`` (available ones, and new ones from the end on, in order) for
        ``member_id`` under ``lock``; (offset, delivery count) of each."""
        acquired = []
        for offset in offsets:
            record = self._records.get(offset)
            if record is None:
                if offset != self.end_offset:
                    raise ValueError(
                        f"offset {offset} is not the share partition's end {self.end_offset}"
                    )
                record = self._records[offset] = InFlight()
                self.end_offset += 1
            record.acquire(member_id, lock)
            acquired.append((offset, record.delivery_count))
        return acquired

    def extend(self, end_offset: int) -> None:
        """Take offsets up to ``end_offset`` in flight as available: the rest of a batch a
        record-limited fetch acquired part of (Kafka caches the whole batch)."""
        while self.end_offset < end_offset:
            self._records[self.end_offset] = InFlight()
            self.end_offset += 1

    # -- acknowledging ------------------------------------------------------------------------

    def acknowledge(
        self, member_id: str, batches: Iterable[AckBatch], limit: int, renew_lock: int
    ) -> AckFailure | list[int]:
        """Apply ``batches`` for ``member_id`` (all or none); the offsets RENEW moved under
        ``renew_lock``, or why nothing was applied. ``limit``: the delivery count limit."""
        changes: dict[int, AcknowledgeType] = {}
        for batch in batches:
            if batch.last < self.start_offset:
                continue  # already done, as Kafka skips it
            failure = self._check(member_id, batch, changes)
            if failure is not None:
                return failure
            for offset in range(max(batch.first, self.start_offset), batch.last + 1):
                changes[offset] = batch.type_of(offset)
        renewed = []
        for offset, kind in changes.items():
            record = self._records[offset]
            if kind is AcknowledgeType.RENEW:
                record.lock = renew_lock
                renewed.append(offset)
            elif kind is AcknowledgeType.RELEASE:
                record.give_back(limit, below_start=False)
            elif kind is AcknowledgeType.ACCEPT:
                record.move(RecordState.ACKNOWLEDGED)
            else:
                record.move(RecordState.ARCHIVED)
        self._advance_start()
        return renewed

    def _check(
        self, member_id: str, batch: AckBatch, earlier: Mapping[int, AcknowledgeType]
    ) -> AckFailure | None:
        """Whether ``batch`` may apply after the ``earlier`` batches of the same request (an
        offset they already acknowledged is no longer acquired, as in Kafka's pending
        transitions; one they renewed still is)."""
        if self.start_offset == self.end_offset:
            return AckFailure(
                Error.INVALID_RECORD_STATE,
                "Batch record not found. The request batch offsets are not found in the cache.",
            )
        if batch.first >= self.end_offset:
            return AckFailure(
                Error.INVALID_REQUEST,
                "Batch record not found. The first offset in request is past acquired records.",
            )
        if batch.last >= self.end_offset:
            return AckFailure(
                Error.INVALID_REQUEST,
                "Batch record not found. The last offset in request is past acquired records.",
            )
        for offset in range(max(batch.first, self.start_offset), batch.last + 1):
            record = self._records[offset]
            done = earlier.get(offset, AcknowledgeType.RENEW) is not AcknowledgeType.RENEW
            if record.state is not RecordState.ACQUIRED or done:
                return AckFailure(
                    Error.INVALID_RECORD_STATE,
                    f"The batch cannot be acknowledged. The offset {offset} is not acquired.",
                )
            if record.member_id != member_id:
                return AckFailure(
                    Error.INVALID_RECORD_STATE, f"Member is not the owner of offset {offset}"
                )
        return None

    # -- giving records back ------------------------------------------------------------------

    def release(self, member_id: str, limit: int) -> bool:
        """Give back every record ``member_id`` holds (its share session closed); whether any."""
        return self._give_back(lambda r: r.member_id == member_id, limit)

    def expire(self, lock: int, limit: int) -> bool:
        """Give back the records still held under ``lock`` (it expired); whether any."""
        return self._give_back(lambda r: r.lock == lock, limit)

    def _give_back(self, held: Callable[[InFlight], bool], limit: int) -> bool:
        found = False
        for offset, record in self._records.items():
            if record.state is RecordState.ACQUIRED and held(record):
                record.give_back(limit, below_start=offset < self.start_offset)
                found = True
        if found:
            self._advance_start()
        return found

    def reload(self, leader_epoch: int) -> None:
        """A new leadership: what the new leader reads back (module rules)."""
        for record in self._records.values():
            if record.state is RecordState.ACQUIRED:
                record.move(RecordState.AVAILABLE)
                record.delivery_count -= 1
        self.leader_epoch = leader_epoch

    # -- the start offset ---------------------------------------------------------------------

    def follow_log_start(self, log_start: int) -> None:
        """The log now starts at ``log_start``: archive what it passed (module rules)."""
        if log_start <= self.start_offset:
            return
        for offset, record in self._records.items():
            if offset < log_start and record.state is RecordState.AVAILABLE:
                record.move(RecordState.ARCHIVED)
        self.start_offset = log_start
        self.end_offset = max(self.end_offset, log_start)
        self._advance_start()

    def _advance_start(self) -> None:
        while self.start_offset < self.end_offset:
            record = self._records.get(self.start_offset)
            if record is not None and not record.state.terminal:
                break
            self.start_offset += 1
        for offset in [o for o, r in self._records.items() if o < self.start_offset]:
            if self._records[offset].state is not RecordState.ACQUIRED:
                del self._records[offset]
