"""What one partition knows of each idempotent producer: Kafka's ProducerStateManager, in small.

The rules, as Kafka's ``ProducerAppendInfo`` applies them to a batch from a client:

- A batch whose producer epoch and sequence range equal one of the producer's last five
  batches is a duplicate: it is not written again, and the answer is success with the offset
  the first copy got.
- An epoch below the one last seen is refused with INVALID_PRODUCER_EPOCH (since Kafka 2.7;
  PRODUCER_FENCED comes from the transaction coordinator, not from the log).
- A new epoch must start at sequence 0; within an epoch each batch must start right after the
  last one (wrapping after 2^31 - 1); anything else is OUT_OF_ORDER_SEQUENCE_NUMBER. A producer
  the partition knows nothing of (never seen, or its batches deleted) may start anywhere: Kafka
  stopped answering UNKNOWN_PRODUCER_ID to produce requests with KIP-360 (2.5).
- While a producer has a transaction open on the partition, a non-transactional batch from it
  is INVALID_TXN_STATE; a transactional batch with none open begins one.
- A transaction marker ends the open transaction and may raise the epoch (a fenced producer's
  transaction is aborted at the new epoch), which forgets the cached batches.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .codes import Error

__all__ = ["NO_EPOCH", "AppendError", "BatchMetadata", "ProducerEntry", "ProducerStates"]

NO_EPOCH = -1
NO_SEQUENCE = -1
_CACHED_BATCHES = 5
_MAX_SEQUENCE = 2**31 - 1


class AppendError(Exception):
    """A batch the log refuses: the error code for the answer, and why, in Kafka's words."""

    def __init__(self, code: Error, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int


@dataclass
class ProducerEntry:
    epoch: int
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=_CACHED_BATCHES))
    txn_first_offset: int | None = None
    coordinator_epoch: int = -1
    last_data_offset: int = -1

    def move_to_epoch(self, epoch: int) -> None:
        if epoch != self.epoch:
            self.batches.clear()
            self.epoch = epoch


def last_sequence(first_seq: int, last_offset_delta: int) -> int:
    """The sequence of a batch's last record: sequences wrap to 0 after 2^31 - 1."""
    return (first_seq + last_offset_delta) % (_MAX_SEQUENCE + 1)


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _MAX_SEQUENCE)


class ProducerStates:
    """The producers of one partition, by producer id."""

    def __init__(self) -> None:
        self.entries: dict[int, ProducerEntry] = {}

    def duplicate_of(
        self, producer_id: int, epoch: int, first_seq: int, last_seq: int
    ) -> BatchMetadata | None:
        entry = self.entries.get(producer_id)
        if entry is None or entry.epoch != epoch:
            return None
        for cached in entry.batches:
            if cached.first_seq == first_seq and cached.last_seq == last_seq:
                return cached
        return None

    def check_data(
        self, producer_id: int, epoch: int, first_seq: int, *, transactional: bool
    ) -> None:
        """Raise :class:`AppendError` if the batch may not be written (see the module rules)."""
        entry = self.entries.get(producer_id)
        current = entry.epoch if entry is not None else NO_EPOCH
        if epoch < current:
            raise AppendError(
                Error.INVALID_PRODUCER_EPOCH,
                f"epoch {epoch} of producer {producer_id} is older than the last seen, {current}",
            )
        if entry is not None and epoch != current:
            if first_seq != 0:
                raise AppendError(
                    Error.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"new epoch {epoch} of producer {producer_id} starts at sequence "
                    f"{first_seq}, not 0",
                )
        elif entry is not None:
            last = entry.batches[-1].last_seq if entry.batches else NO_SEQUENCE
            if not _in_sequence(last, first_seq):
                raise AppendError(
                    Error.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"sequence {first_seq} of producer {producer_id} does not follow {last}",
                )
        if entry is not None and entry.txn_first_offset is not None and not transactional:
            raise AppendError(
                Error.INVALID_TXN_STATE,
                f"producer {producer_id} wrote outside the transaction it has open",
            )

    def record_data(
        self,
        producer_id: int,
        epoch: int,
        batch: BatchMetadata,
        *,
        transactional: bool,
    ) -> bool:
        """Remember a written batch; whether it began a transaction on this partition."""
        entry = self.entries.setdefault(producer_id, ProducerEntry(epoch))
        entry.move_to_epoch(epoch)
        entry.batches.append(batch)
        entry.last_data_offset = batch.last_offset
        if transactional and entry.txn_first_offset is None:
            entry.txn_first_offset = batch.first_offset
            return True
        return False

    def check_marker(self, producer_id: int, epoch: int, coordinator_epoch: int) -> None:
        entry = self.entries.get(producer_id)
        if entry is None:
            return
        if epoch < entry.epoch:
            raise AppendError(
                Error.INVALID_PRODUCER_EPOCH,
                f"marker epoch {epoch} of producer {producer_id} is older than {entry.epoch}",
            )
        if coordinator_epoch < entry.coordinator_epoch:
            raise AppendError(
                Error.UNKNOWN_SERVER_ERROR,  # Kafka: TRANSACTION_COORDINATOR_FENCED
                f"coordinator epoch {coordinator_epoch} is older than {entry.coordinator_epoch}",
            )

    def record_marker(self, producer_id: int, epoch: int, coordinator_epoch: int) -> int | None:
        """End the producer's transaction here; the first offset it had, if one was open."""
        entry = self.entries.setdefault(producer_id, ProducerEntry(epoch))
        entry.move_to_epoch(epoch)
        first, entry.txn_first_offset = entry.txn_first_offset, None
        entry.coordinator_epoch = coordinator_epoch
        return first

    def forget_before(self, offset: int) -> None:
        """Drop producers whose every batch lies below ``offset`` (deleted records)."""
        for producer_id in [
            pid
            for pid, entry in self.entries.items()
            if entry.last_data_offset < offset and entry.txn_first_offset is None
        ]:
            del self.entries[producer_id]
