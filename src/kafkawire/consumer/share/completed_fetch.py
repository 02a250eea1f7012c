"""One partition's part of one ShareFetch response, read as the application takes its records
(after Kafka's Java ``ShareCompletedFetch``).

Rules kept here:

- Only acquired records are handed out: the response's ``records`` may hold more (whole
  batches, and librdkafka's mock sends again every batch the member still holds), and
  ``acquired`` (offset -> delivery count) says which offsets this fetch gave this member; it is
  built by :mod:`.holdings`, which leaves out what the member holds already.
- An acquired offset with no record behind it (compacted away, a transaction marker, a batch
  that ends before it) is answered GAP, so the broker does not wait for its lock to expire.
- What cannot be read stops the reading where it is, as the consumer's
  :mod:`~kafkawire.consumer.fetching.completed_fetch` does: the records before it are handed
  out, then the error. A record whose deserializer raises is RELEASEd (delivered again,
  counted; never accepted unread, whatever the acknowledgement mode). So are the acquired
  records of a batch that cannot be read (corrupt, or past the decompression bound), and of
  everything after a batch whose header cannot be read: delivered again until the group's
  delivery limit archives them. Java REJECTs a corrupt batch at once; a release costs a few
  deliveries and loses nothing to a fault in transit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.errors import RecordDeserializationError
from kafkawire.consumer.fetching.record import ConsumerRecord, consumer_records
from kafkawire.consumer.settings import Deserializer
from kafkawire.errors import KafkawireError
from kafkawire.records import Batch, RecordsError

from .acknowledgements import GAP, AcknowledgeType
from .errors import ShareRecordDeserializationError

__all__ = ["Answer", "ShareCompletedFetch"]

Answer = Callable[[TopicPartition, dict[int, int]], None]
"""Queue acknowledgements of a partition's offsets (offset -> type) on the member's behalf."""


class ShareCompletedFetch:
    """What one ShareFetch answered for one partition: the batches still to read, the
    acquired offsets not yet handed out, and ``error``, what could not be read after them."""

    __slots__ = ("_answer", "_pending", "_stopped", "acquired", "batches", "error", "node", "tp")

    def __init__(
        self,
        tp: TopicPartition,
        node: int,
        batches: deque[Batch],
        acquired: dict[int, int],
        answer: Answer,
        *,
        error: RecordsError | None = None,
    ) -> None:
        self.tp = tp
        self.node = node  # the leader it came from: its acknowledgements go there
        self.batches = batches
        self.acquired = acquired  # offset -> delivery count, not handed out yet
        self.error = error
        self._answer = answer
        self._pending: list[ConsumerRecord] = []  # built, not handed out yet
        self._stopped: KafkawireError | None = None  # what follows ``_pending``

    @property
    def exhausted(self) -> bool:
        return not (self.acquired or self._pending or self._stopped or self.error)

    def offsets_left(self) -> list[int]:
        """The acquired offsets not handed out (to release them when the fetch is dropped)."""
        return [*(r.offset for r in self._pending), *self.acquired]

    def take(
        self,
        wanted: int,
        key_deserializer: Deserializer | None,
        value_deserializer: Deserializer | None,
    ) -> tuple[list[ConsumerRecord], KafkawireError | None]:
        """Up to ``wanted`` acquired records, or (with nothing before it) the error that
        stopped the reading (see the module doc)."""
        out: list[ConsumerRecord] = []
        while len(out) < wanted:
            if self._pending:
                taken = self._pending[: wanted - len(out)]
                del self._pending[: len(taken)]
                out += taken
                continue
            if self._stopped is not None:
                if out:  # the records before it first; the next take reports it
                    return out, None
                stopped, self._stopped = self._stopped, None
                return out, stopped
            if self.error is not None and self.acquired and not self.batches:
                self._unreadable(self.error, None)  # what follows is unknown: all released
                self.error = None
                continue
            if not self.batches or not self.acquired:
                self._gaps(None)
                break
            self._read_batch(key_deserializer, value_deserializer)
        return out, None

    def _read_batch(
        self, key_deserializer: Deserializer | None, value_deserializer: Deserializer | None
    ) -> None:
        batch = self.batches[0]
        first = next(iter(self.acquired))  # offsets are kept in increasing order
        if batch.next_offset <= first:  # held already, or not acquired: nothing of it is ours
            self.batches.popleft()
            return
        built: list[ConsumerRecord] = []
        if not getattr(batch, "is_control", False):
            try:
                consumer_records(
                    built,
                    self.tp,
                    batch,
                    first,
                    key_deserializer=key_deserializer,
                    value_deserializer=value_deserializer,
                    delivery_counts=self.acquired,
                )
            except RecordDeserializationError as exc:
                self._undeserializable(built, exc)
                return
            except RecordsError as exc:
                self.batches.popleft()
                self._unreadable(exc, batch.next_offset)
                return
        self.batches.popleft()
        for record in built:
            del self.acquired[record.offset]
        self._pending += built
        self._gaps(batch.next_offset)

    def _undeserializable(
        self, built: list[ConsumerRecord], exc: RecordDeserializationError
    ) -> None:
        """Hand out what came before the record, release it, and report it after them (the
        batch stays first: the next read goes on after it)."""
        for record in built:
            del self.acquired[record.offset]
        count = self.acquired.pop(exc.offset)
        self._answer(self.tp, {exc.offset: AcknowledgeType.RELEASE})
        self._pending.extend(built)
        self._stopped = ShareRecordDeserializationError(exc, count)

    def _unreadable(self, exc: RecordsError, below: int | None) -> None:
        """The acquired records of a batch that cannot be read (below ``below``; all left,
        with ``None``: where it ends is unknown) are released, and reported."""
        ours = self._take_below(below)
        if ours:
            self._answer(self.tp, dict.fromkeys(ours, AcknowledgeType.RELEASE))
        located = type(exc)(
            f"{self.tp.topic}/{self.tp.partition}: the batch at offset {exc.base_offset} "
            f"cannot be read ({exc.reason}); its {len(ours)} acquired records were released"
        )
        located.base_offset = exc.base_offset
        located.__cause__ = exc
        self._stopped = located

    def _gaps(self, below: int | None) -> None:
        """Answer GAP for acquired offsets below ``below`` (all, with ``None``) that no record
        was found for."""
        gaps = self._take_below(below)
        if gaps:
            self._answer(self.tp, dict.fromkeys(gaps, GAP))

    def _take_below(self, below: int | None) -> list[int]:
        """Remove and return the acquired offsets below ``below`` (all, with ``None``)."""
        taken = []
        for offset in self.acquired:
            if below is not None and offset >= below:
                break
            taken.append(offset)
        for offset in taken:
            del self.acquired[offset]
        return taken
