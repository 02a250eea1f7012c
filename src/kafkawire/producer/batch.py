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

:func:`append_record` (a record stamped now, and its delivery: the producer's common case) is
compiled in the optional C extension ``kafkawire.producer._accel`` where it is built, and
gives what :func:`append_record_pure` gives.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from kafkawire._extensions import load_optional
from kafkawire.cluster import TopicPartition
from kafkawire.records import Compression, HeaderInput, RecordBatchBuilder

__all__ = [
    "HEADER_OVERHEAD",
    "RECORD_OVERHEAD",
    "BatchResult",
    "Delivery",
    "ProducerBatch",
    "RecordMetadata",
    "append_record",
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
        self.future: asyncio.Future[BatchResult] = asyncio.get_running_loop().create_future()
        self.memory = 0  # its records' (uncompressed) size, counted against buffer_memory
        self.attempts = 0
        self.retry_at = 0.0
        self.producer_state: tuple[int, int, int] | None = None  # (id, epoch, base sequence)
        self.payload: bytes | None = None
        self.last_error: BaseException | None = None  # of the last attempt that failed

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


class Delivery:
    """What :meth:`Producer.send` returns: ``await`` it for the record's
    :class:`RecordMetadata`, or the error that stopped its delivery."""

    __slots__ = ("_future", "_key_size", "_offset", "_timestamp", "_value_size")

    def __init__(
        self,
        future: asyncio.Future[BatchResult],
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

    def _metadata(self, result: BatchResult) -> RecordMetadata:
        tp = result.tp
        return RecordMetadata(
            topic=tp.topic,
            partition=tp.partition,
            offset=-1 if result.base_offset < 0 else result.base_offset + self._offset,
            timestamp=self._timestamp if result.log_append_time < 0 else result.log_append_time,
            serialized_key_size=self._key_size,
            serialized_value_size=self._value_size,
        )


def append_record_pure(
    builder: RecordBatchBuilder,
    future: asyncio.Future[BatchResult],
    key: bytes | None,
    value: bytes | None,
) -> Delivery:
    """Append a record without headers to ``builder``, stamped with the wall clock's
    milliseconds; its delivery, which awaits ``future`` (the batch's)."""
    timestamp = time.time_ns() // 1_000_000
    return Delivery(future, builder.append(key, value, timestamp=timestamp), timestamp, key, value)


AppendRecord = Callable[
    [RecordBatchBuilder, "asyncio.Future[BatchResult]", bytes | None, bytes | None], Delivery
]


def _load_compiled() -> AppendRecord:
    from . import _accel

    _accel.setup(Delivery)
    return _accel.append


_COMPILED = load_optional("kafkawire.producer._accel", _load_compiled)
append_record: AppendRecord = append_record_pure if _COMPILED is None else _COMPILED
