"""One partition's part of one Fetch response, read as the application takes its records
(after Kafka's Java ``CompletedFetch`` and ``FetchCollector``).

Rules kept here:

- Records are built (and deserialized) only as they are handed out: the buffer holds the
  fetched bytes and the batch headers, not record objects.
- Positions only move forward, and no offset is handed out twice: a record below the position
  is skipped (in a batch the position starts inside, a batch wholly below the position, an
  offset repeated within a batch), and the position after a batch is the larger of the offset
  its header says follows it and the offset after its last record (a header whose
  ``last_offset_delta`` is too small cannot move it back). Java's ``CompletedFetch`` skips
  records below its next fetch offset, and its ``FetchCollector`` moves a position only
  forward.
- What cannot be read stops the reading where it is: a deserializer that raises on a record,
  a batch that is corrupt or decompresses past the bound. The records before it are handed
  out; the position stays at it; and the error is the result of the next take, with nothing
  before it, and of every take after that until the application seeks (a deserializer is
  tried again each time). Java keeps the error as ``cachedRecordException`` and raises it from
  each ``poll()`` once the records before it were returned.
"""

from __future__ import annotations

from collections import deque

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.errors import RecordDeserializationError
from kafkawire.consumer.settings import Deserializer
from kafkawire.errors import KafkawireError
from kafkawire.records import Batch, DecompressionLimitError, RecordsError

from .record import ConsumerRecord, consumer_records

__all__ = ["CompletedFetch", "unreadable"]


class CompletedFetch:
    """What one Fetch answered for one partition: the batches still to read (with their
    visibility at the isolation level), and ``error``, what could not be read after them."""

    __slots__ = (
        "_pending",
        "_pending_end",
        "_stopped",
        "batches",
        "decompression_bound",
        "epoch",
        "error",
        "leader_epoch",
        "position",
        "tp",
    )

    def __init__(
        self,
        tp: TopicPartition,
        epoch: int,
        fetch_offset: int,
        batches: deque[tuple[Batch, bool]],
        *,
        error: KafkawireError | None = None,
        decompression_bound: str = "",
    ) -> None:
        self.tp = tp
        self.epoch = epoch  # the partition's epoch when it was fetched (see .subscription)
        self.position = fetch_offset  # where the reading stands: the partition's position
        self.leader_epoch = -1  # of the batch the position was last moved past, or into
        self.batches = batches
        self.error = error
        self.decompression_bound = decompression_bound  # how its errors name the bound
        self._pending: list[ConsumerRecord] = []  # built, not handed out yet
        self._pending_end = fetch_offset  # the position once ``_pending`` is handed out
        self._stopped: KafkawireError | None = None  # what follows ``_pending``

    @property
    def next_offset(self) -> int:
        """Where fetching goes on after what this holds."""
        last = self.batches[-1][0].next_offset if self.batches else self.position
        return max(self.position, self._pending_end, last)

    @property
    def exhausted(self) -> bool:
        return not (self.batches or self._pending or self._stopped or self.error)

    def take(
        self,
        wanted: int,
        key_deserializer: Deserializer | None,
        value_deserializer: Deserializer | None,
    ) -> tuple[list[ConsumerRecord], KafkawireError | None]:
        """Up to ``wanted`` records from the position on (moving it past them), and the error
        that stopped the reading, if one did (see the module doc)."""
        out: list[ConsumerRecord] = []
        while len(out) < wanted:
            if self._pending:
                self._hand_out(out, wanted)
                continue
            if self._stopped is not None:  # reported after the records before it
                stopped, self._stopped = self._stopped, None
                return out, stopped
            if not self.batches:
                return out, self.error
            error = self._read_batch(key_deserializer, value_deserializer)
            if error is not None and not self._pending:
                return out, error
        return out, None

    def _hand_out(self, out: list[ConsumerRecord], wanted: int) -> None:
        taken = self._pending[: wanted - len(out)]
        del self._pending[: len(taken)]
        out += taken
        last = taken[-1]
        self.leader_epoch = last.leader_epoch
        self.position = last.offset + 1 if self._pending else self._pending_end

    def _read_batch(
        self, key_deserializer: Deserializer | None, value_deserializer: Deserializer | None
    ) -> KafkawireError | None:
        """Build the records of the first batch (a batch not visible at the isolation level is
        skipped); the error that stopped it, if one did."""
        batch, visible = self.batches[0]
        epoch = getattr(batch, "partition_leader_epoch", -1)
        built: list[ConsumerRecord] = []
        if visible:
            try:
                end = consumer_records(
                    built,
                    self.tp,
                    batch,
                    self.position,
                    key_deserializer=key_deserializer,
                    value_deserializer=value_deserializer,
                )
            except RecordDeserializationError as exc:
                # The batch stays first: the next take builds it again from the position.
                self._pending, self._pending_end = built, exc.offset
                self._stopped = exc if built else None
                return exc
            except RecordsError as exc:
                return unreadable(
                    self.tp, self.position, exc, batch.next_offset, self.decompression_bound
                )
            if built:
                self._pending, self._pending_end = built, max(end, batch.next_offset)
        self.batches.popleft()
        if not built and batch.next_offset > self.position:  # nothing to hand out: skipped
            self.position, self.leader_epoch = batch.next_offset, epoch
            self._pending_end = self.position
        return None


def unreadable(
    tp: TopicPartition,
    position: int,
    error: RecordsError,
    batch_end: int | None,
    decompression_bound: str,
) -> RecordsError:
    """``error`` (of the records layer, about a fetched batch, which ends before ``batch_end``
    if its header could be read) as the application gets it: of the same type, naming the
    partition, the offset it stands at, the batch, and how to go on."""
    where = f"{tp.topic}/{tp.partition} at offset {position}"
    batch_offset = error.base_offset
    skip = "past it" if batch_end is None else f"to offset {batch_end} to skip it"
    if isinstance(error, DecompressionLimitError):
        message = (
            f"{where}: the batch at offset {batch_offset} decompresses past "
            f"{decompression_bound} ({error.reason}); raise max_decompressed_bytes_per_fetch, "
            f"or seek {skip}"
        )
    else:
        message = (
            f"{where}: the batch at offset {batch_offset} cannot be read ({error.reason}); "
            f"seek {skip}"
        )
    located = type(error)(message)
    located.base_offset = batch_offset
    located.__cause__ = error
    return located
