"""A batch of records for one partition, and what a record's sender awaits.

A :class:`ProducerBatch` holds its records encoded (in a v2 batch builder) and one future for
the whole batch; each record's :class:`Delivery` awaits that future and adds its own offset
within the batch, which is cheaper than one future per record. The idempotent producer's
fields (producer id, epoch, base sequence), given by :mod:`.sequences`, are set when the
batch is first sent and again after an epoch bump; the bytes sent are kept, so a retry
resends exactly the same batch.

A delivery holds the future, not the batch: once the batch is done, nothing refers to it and
its records (builder and built bytes) are freed, however long an application keeps the
deliveries. The future's :class:`BatchResult` carries what a delivery answers with.

A batch the broker refuses as too large (MESSAGE_TOO_LARGE) is split in two
(:meth:`ProducerBatch.split`, as Java's ``ProducerBatch.split``): its records are read back
from the bytes built (the send path keeps nothing more per record for this rare case) into
two new batches, each of which may be split again. Its future waits for theirs and then holds
a :class:`SplitResult`, from which each delivery takes its own record's part: the part's
offset, or its error.

:func:`append_record` (a record stamped now, and its delivery: the producer's common case) is
compiled in the optional C extension ``kafkawire.producer._accel`` where it is built, and
gives what :func:`append_record_pure` gives.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from kafkawire._extensions import load_optional
from kafkawire.cluster import TopicPartition
from kafkawire.records import Compression, HeaderInput, Record, RecordBatchBuilder
from kafkawire.records.v2_records import read_records

__all__ = [
    "HEADER_OVERHEAD",
    "RECORD_OVERHEAD",
    "BatchOutcome",
    "BatchResult",
    "Delivery",
    "ProducerBatch",
    "RecordMetadata",
    "SplitResult",
    "append_record",
    "headers_size",
]

# What a record counts for against batch_size and buffer_memory: this, its key's and value's
# lengths, and per header HEADER_OVERHEAD and its key's (UTF-8) and value's lengths.
RECORD_OVERHEAD = 21  # a v2 record's length, attributes, deltas and lengths at their widest
HEADER_OVERHEAD = 10  # a header's key and value lengths at their widest


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where a record was written."""

    topic: str
    partition: int
    offset: int
    """Its offset; -1 when the broker did not say (acks=0, or a retry of a batch the broker
    already had, answered DUPLICATE_SEQUENCE_NUMBER)."""
    timestamp: int
    """The record's timestamp, or the broker's append time on a topic that uses it."""
    serialized_key_size: int
    serialized_value_size: int


class BatchResult(NamedTuple):
    tp: TopicPartition
    base_offset: int  # -1 when unknown
    log_append_time: int  # -1 unless the topic stamps records with the broker's time


class SplitResult(NamedTuple):
    """What a batch split after MESSAGE_TOO_LARGE ends with, once each of its parts is done:
    part ``i`` holds its records ``bounds[i]`` to ``bounds[i + 1] - 1``, and ends as
    ``futures[i]`` does (delivered, failed, or split in turn)."""

    bounds: tuple[int, ...]
    futures: tuple[asyncio.Future[BatchOutcome], ...]

    def locate(self, index: int) -> tuple[BatchResult, int]:
        """The result of the batch that delivered record ``index`` of the split batch, and
        the record's index in it; raises that batch's error if it failed."""
        outcome: BatchOutcome = self
        while isinstance(outcome, SplitResult):
            part = bisect.bisect_right(outcome.bounds, index) - 1
            index -= outcome.bounds[part]
            outcome = outcome.futures[part].result()
        return outcome, index


BatchOutcome = BatchResult | SplitResult
"""What a batch's future holds once it is delivered."""


class ProducerBatch:
    """Records bound for one partition, sent together in one Produce request."""

    __slots__ = (
        "attempts",
        "builder",
        "created",
        "future",
        "last_error",
        "memory",
        "payload",
        "producer_state",
        "retry_at",
        "split_path",
        "tp",
        "unfinished",
    )

    def __init__(
        self,
        tp: TopicPartition,
        *,
        compression: Compression,
        compression_level: int | None,
        created: float,
        unfinished: set[ProducerBatch],
    ) -> None:
        self.tp = tp
        # The batches not done yet (the accumulator's, which flush waits for): this one is
        # in it until it completes or fails, and leaves it then (no callback per batch).
        self.unfinished = unfinished
        unfinished.add(self)
        self.builder = RecordBatchBuilder(
            compression=compression, compression_level=compression_level
        )
        self.created = created  # time.monotonic()
        self.future: asyncio.Future[BatchOutcome] = asyncio.get_running_loop().create_future()
        self.memory = 0  # its records' (uncompressed) size, counted against buffer_memory
        self.attempts = 0
        self.retry_at = 0.0
        self.producer_state: tuple[int, int, int] | None = None  # (id, epoch, base sequence)
        self.payload: bytes | None = None
        self.last_error: BaseException | None = None  # of the last attempt that failed
        # Empty for a batch the accumulator made; for a part of a split batch, that batch's
        # path and the part's index. A partition's batches go in (created, split_path) order.
        self.split_path: tuple[int, ...] = ()

    def __len__(self) -> int:
        return len(self.builder)

    def size_with(
        self, key: bytes | None, value: bytes | None, headers: Sequence[HeaderInput]
    ) -> int:
        """An upper bound on the batch's size once this record is in it."""
        return self.builder.estimated_size_with(key, value, headers)

    def build(self, producer_state: tuple[int, int, int] | None, *, transactional: bool) -> bytes:
        """The batch's bytes with these producer fields (built again only when they change)."""
        if self.payload is None or producer_state != self.producer_state:
            producer_id, epoch, sequence = producer_state or (-1, -1, -1)
            self.builder.set_producer_state(
                producer_id=producer_id,
                producer_epoch=epoch,
                base_sequence=sequence,
                transactional=transactional,
            )
            self.producer_state = producer_state
            self.payload = self.builder.build()
        return self.payload

    def complete(self, base_offset: int, log_append_time: int) -> None:
        """Delivered: ``base_offset`` and ``log_append_time`` as the broker answered (-1:
        unknown, or not a log-append-time topic)."""
        if not self.future.done():
            self.future.set_result(BatchResult(self.tp, base_offset, log_append_time))
            self.unfinished.discard(self)

    def fail(self, error: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(error)
            self.future.exception()  # each Delivery re-raises it; nobody need retrieve it here
            self.unfinished.discard(self)

    def drop(self) -> None:
        """Made for a record that was refused: no record is in it, nothing awaits it."""
        self.future.cancel()
        self.unfinished.discard(self)

    def records(self) -> tuple[Record, ...]:
        """Its records, read back from the bytes built (offsets from 0)."""
        builder = self.builder
        return read_records(
            builder.encoded(),
            base_offset=0,
            base_timestamp=builder.base_timestamp,
            log_append_time=None,
            count=len(builder),
        )

    def split(
        self, *, compression: Compression, compression_level: int | None
    ) -> tuple[ProducerBatch, ProducerBatch]:
        """Its records (two or more) in two new batches, in order: the first takes them while
        they fit in half its memory (at least one), the second the rest, as Java splits a
        batch already split (KAFKA-8350: at its largest record or half its size, whichever
        is larger). The parts keep its creation time (so its delivery deadline), attempts
        and last error, and count their records' memory; it is no longer unfinished, and
        ends with a :class:`SplitResult` once both have ended."""
        records = self.records()
        assert len(records) > 1, "a record alone is not split"
        weights = [_memory(record) for record in records]
        half = sum(weights) // 2
        cut, used = 1, weights[0]
        while cut < len(records) - 1 and used + weights[cut] <= half:
            used += weights[cut]
            cut += 1
        parts = (
            self._part(0, records[:cut], compression, compression_level),
            self._part(1, records[cut:], compression, compression_level),
        )
        self.unfinished.discard(self)  # its parts are, in its place
        futures = (parts[0].future, parts[1].future)
        settle = functools.partial(_settle_split, self.future, (0, cut, len(records)), futures)
        for future in futures:
            future.add_done_callback(settle)
        return parts

    def _part(
        self,
        index: int,
        records: Sequence[Record],
        compression: Compression,
        compression_level: int | None,
    ) -> ProducerBatch:
        part = ProducerBatch(
            self.tp,
            compression=compression,
            compression_level=compression_level,
            created=self.created,
            unfinished=self.unfinished,
        )
        for record in records:
            part.builder.append(
                record.key, record.value, timestamp=record.timestamp, headers=record.headers
            )
            part.memory += _memory(record)
        part.attempts = self.attempts
        part.last_error = self.last_error
        part.split_path = (*self.split_path, index)
        return part


def _memory(record: Record) -> int:
    """What a record counts for against batch_size and buffer_memory (see RECORD_OVERHEAD)."""
    size = RECORD_OVERHEAD + len(record.key or b"") + len(record.value or b"")
    return size + headers_size(record.headers)


def headers_size(headers: Sequence[HeaderInput]) -> int:
    """What a record's headers count for (see RECORD_OVERHEAD)."""
    size = 0
    for header in headers:
        name, data = (header.key, header.value) if not isinstance(header, tuple) else header
        size += HEADER_OVERHEAD + len(name.encode()) + (len(data) if data else 0)
    return size


def _settle_split(
    future: asyncio.Future[BatchOutcome],
    bounds: tuple[int, ...],
    parts: tuple[asyncio.Future[BatchOutcome], ...],
    _: object,
) -> None:
    """End a split batch's ``future`` once each of its ``parts`` has ended (it holds the
    future only, not the batch: the batch's records are freed)."""
    if not future.done() and all(part.done() for part in parts):
        future.set_result(SplitResult(bounds, parts))


class Delivery:
    """What :meth:`Producer.send` returns: ``await`` it for the record's
    :class:`RecordMetadata`, or the error that stopped its delivery."""

    __slots__ = ("_future", "_key_size", "_offset", "_timestamp", "_value_size")

    def __init__(
        self,
        future: asyncio.Future[BatchOutcome],
        offset: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
    ) -> None:
        self._future = future  # the batch's, not the batch: its records go once it is done
        self._offset = offset
        self._timestamp = timestamp
        self._key_size = -1 if key is None else len(key)
        self._value_size = -1 if value is None else len(value)

    @property
    def starts_batch(self) -> bool:
        """Whether the record is its batch's first: awaiting those deliveries awaits every
        batch."""
        return self._offset == 0

    def done(self) -> bool:
        """Whether the record was delivered or failed (awaiting the delivery would not wait)."""
        return self._future.done()

    def add_done_callback(self, callback: Callable[[Delivery], object]) -> None:
        """Call ``callback(delivery)`` on the event loop once the record is delivered or
        failed (soon, if it is already), as Java's ``send(record, callback)`` does; the
        callback reads the outcome with :meth:`result`."""
        self._future.add_done_callback(lambda _: callback(self))

    def __await__(self) -> Generator[Any, None, RecordMetadata]:
        result = yield from asyncio.shield(self._future).__await__()
        return self._metadata(result)

    def result(self) -> RecordMetadata:
        """The metadata of a delivered record (``InvalidStateError`` before it is done)."""
        return self._metadata(self._future.result())

    def _metadata(self, result: BatchOutcome) -> RecordMetadata:
        offset = self._offset
        if isinstance(result, SplitResult):  # rare: refused as too large, sent in parts
            result, offset = result.locate(offset)
        tp = result.tp
        return RecordMetadata(
            topic=tp.topic,
            partition=tp.partition,
            offset=-1 if result.base_offset < 0 else result.base_offset + offset,
            timestamp=self._timestamp if result.log_append_time < 0 else result.log_append_time,
            serialized_key_size=self._key_size,
            serialized_value_size=self._value_size,
        )


def append_record_pure(
    builder: RecordBatchBuilder,
    future: asyncio.Future[BatchOutcome],
    key: bytes | None,
    value: bytes | None,
) -> Delivery:
    """Append a record without headers to ``builder``, stamped with the wall clock's
    milliseconds; its delivery, which awaits ``future`` (the batch's)."""
    timestamp = time.time_ns() // 1_000_000
    return Delivery(future, builder.append(key, value, timestamp=timestamp), timestamp, key, value)


AppendRecord = Callable[
    [RecordBatchBuilder, "asyncio.Future[BatchOutcome]", bytes | None, bytes | None], Delivery
]


def _load_compiled() -> AppendRecord:
    from . import _accel

    _accel.setup(Delivery)
    return _accel.append


_COMPILED = load_optional("kafkawire.producer._accel", _load_compiled)
append_record: AppendRecord = append_record_pure if _COMPILED is None else _COMPILED
