"""Many records in one call (:meth:`Producer.send_batch <.producer.Producer.send_batch>`):
their columns, where each goes, how they are queued, and the one awaitable for them all.

Rules, each as :meth:`~.producer.Producer.send` keeps it for one record:

- A record goes to the partition given (one for all, or one per record, ``None`` there:
  chosen), else to the producer's own partitioner's choice, else to murmur2 of its key, else
  to the topic's sticky partition (KIP-794: it takes records until ``batch_size`` bytes have
  gone to it).
- Each partition's records are queued in their order, into the batches ``send`` fills,
  with no Python step per record where the columns are bytes or Arrow arrays (see
  :mod:`kafkawire.records.columns`): the batch builder appends a run of them in one call.
- Every record is checked before any is queued: types (keys, values and header values bytes
  or ``None``), headers, and size (larger than ``max_request_size`` or ``buffer_memory``:
  :class:`~.errors.RecordTooLargeError`, naming the record).
- What is queued counts against ``buffer_memory``: the call reserves room in runs
  (:data:`RESERVE`), waiting for it as ``send`` does (``max_block_ms`` each time, in turn
  with the sends waiting), and gives back what it did not use. Between batches it lets the
  sender run.
- Cancelled while it waits, the records queued so far stay queued and are sent; the rest are
  not (``flush`` waits for those sent).
- The result, once every batch is done: the offset of the first record of the call in each
  partition, or :class:`SendBatchError` with each record's error (``None`` for those
  delivered). Idempotence is the batches': their sequence numbers are given as they are sent.
"""

from __future__ import annotations

import asyncio
import itertools
from array import array
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from kafkawire.errors import KafkawireError
from kafkawire.records import HeaderInput, RecordBatchBuilder
from kafkawire.records.columns import NONE, ColumnSpec, column, items, length, timestamp_column
from kafkawire.records.v2_records import measure_columns

from .arguments import checked_partition
from .batch import HEADER_OVERHEAD, RECORD_OVERHEAD, BatchOutcome, BatchResult, SplitResult
from .partitioner import Partitioner, StickyPartitioner, group_by_partition, key_partitions

if TYPE_CHECKING:
    from .accumulator import RecordAccumulator

__all__ = ["BatchDelivery", "Columns", "SendBatchError", "SentBatch", "Span"]

_CALL = "send_batch()"
_INTS = {"int32": "i", "int64": "q"}  # Arrow partition columns read in place
RESERVE = 1 << 20
"""The room in ``buffer_memory`` a call reserves at a time (at most a quarter of it, at least
its next record's)."""

Serializer = Callable[[Any], Any]


class Span(NamedTuple):
    """Records ``start`` to ``stop``: positions in ``order`` (native int32 record indexes),
    or the records' own indexes when it is ``None``."""

    order: bytes | None
    start: int
    stop: int


class Columns(NamedTuple):
    """The records of one call, as the batch builder appends them."""

    values: ColumnSpec
    keys: ColumnSpec
    headers: Sequence[Sequence[HeaderInput] | None] | None
    timestamps: ColumnSpec
    timestamp: int  # every record's, when ``timestamps`` is NONE
    record_count: int

    def measure(self) -> tuple[int, int, int]:
        """Every record checked; (total memory, the largest record's, its index or -1)."""
        return measure_columns(
            values=self.values,
            keys=self.keys,
            headers=self.headers,
            overhead=RECORD_OVERHEAD,
            header_overhead=HEADER_OVERHEAD,
        )

    def append_to(
        self, builder: RecordBatchBuilder, span: Span, room: int, soft_room: int
    ) -> tuple[int, int, int]:
        """See :meth:`~kafkawire.records.v2_records.EncodedRecordsPure.append_columns`."""
        return builder.append_columns(
            values=self.values,
            keys=self.keys,
            headers=self.headers,
            timestamps=self.timestamps,
            timestamp=self.timestamp,
            order=span.order,
            start=span.start,
            stop=span.stop,
            room=room,
            soft_room=soft_room,
            overhead=RECORD_OVERHEAD,
            header_overhead=HEADER_OVERHEAD,
        )


def columns(
    values: object,
    keys: object,
    headers: Sequence[Sequence[HeaderInput] | None] | None,
    timestamps: object,
    *,
    now: int,
    key_serializer: Serializer | None,
    value_serializer: Serializer | None,
) -> Columns:
    """The call's arguments as columns (serialized first where the producer has
    serializers: then one Python step per record)."""
    value_column = _serialized(values, value_serializer, "values")
    if value_column[0] == NONE:
        raise TypeError("send_batch(): values must be given (a sequence or an Arrow array)")
    count = length(value_column)
    if headers is not None and not isinstance(headers, list | tuple):
        headers = list(headers)
    return Columns(
        values=value_column,
        keys=_serialized(keys, key_serializer, "keys"),
        headers=headers,
        timestamps=timestamp_column(timestamps),
        timestamp=now,
        record_count=count,
    )


def _serialized(data: object, serializer: Serializer | None, what: str) -> ColumnSpec:
    if serializer is None or data is None:
        return column(data, what)
    listed = data.to_pylist() if hasattr(data, "to_pylist") else list(data)  # type: ignore[call-overload]
    return column([None if v is None else serializer(v) for v in listed], what)


Route = tuple[int | None, Span]
"""A run of records for one partition, or for the sticky partition (``None``)."""


def routes(
    topic: str,
    records: Columns,
    partition: object,
    partition_count: int,
    partitioner: Partitioner | None,
) -> list[Route]:
    """Where the records go, as :meth:`~.producer.Producer.send` would send each."""
    count = records.record_count
    everything = Span(None, 0, count)
    if partition.__class__ is int:
        named = f"{_CALL}: partition"
        return [(checked_partition(topic, partition, partition_count, named=named), everything)]
    given = None if partition is None else _given(topic, partition, count, partition_count)
    if given is not None and -1 not in given:
        chosen = given  # every record has its own
    elif partitioner is not None:
        keys = items(records.keys, count)
        chosen = array("i", [_chosen(partitioner, topic, k, partition_count) for k in keys])
    elif records.keys[0] != NONE:
        chosen = array("i", key_partitions(records.keys, partition_count))
    elif given is None:
        return [(None, everything)]  # all to the sticky partition
    else:
        chosen = array("i", [-1]) * count
    if given is not None and chosen is not given:
        for index, own in enumerate(given):
            if own >= 0:
                chosen[index] = own
    order, bounds = group_by_partition(chosen.tobytes(), partition_count)
    found: list[Route] = [
        (p, Span(order, bounds[p], bounds[p + 1]))
        for p in range(partition_count)
        if bounds[p] < bounds[p + 1]
    ]
    if bounds[partition_count] < bounds[partition_count + 1]:
        found.append((None, Span(order, bounds[partition_count], bounds[partition_count + 1])))
    return found


def _chosen(partitioner: Partitioner, topic: str, key: bytes | None, count: int) -> int:
    chosen = partitioner(topic, key, count)
    if not 0 <= chosen < count:
        raise ValueError(f"the partitioner chose {chosen} for {topic!r} of {count} partitions")
    return chosen


def _given(topic: str, partitions: Any, count: int, partition_count: int) -> array[int]:
    """Each record's own partition (-1 where it has none), checked: an Arrow int array
    without nulls is read in place, anything else item by item."""
    if hasattr(partitions, "buffers") and str(getattr(partitions, "type", "")) in _INTS:
        if len(partitions) != count:
            raise ValueError(f"{_CALL}: partition has {len(partitions)} items, not {count}")
        if not partitions.null_count:
            width = _INTS[str(partitions.type)]
            start = partitions.offset
            values = array(width, bytes(partitions.buffers()[1]))[start : start + count]
            if not values or (min(values) >= 0 and max(values) < partition_count):
                return values if width == "i" else array("i", values)
    if not isinstance(partitions, Sequence | array) and not hasattr(partitions, "to_pylist"):
        raise TypeError(
            f"{_CALL}: partition must be an int, a sequence of ints or None, or None, "
            f"not {partitions!r}"
        )
    listed = partitions.to_pylist() if hasattr(partitions, "to_pylist") else list(partitions)
    if len(listed) != count:
        raise ValueError(f"{_CALL}: partition has {len(listed)} items, not {count}")
    return array(
        "i",
        (
            -1
            if own is None
            else checked_partition(topic, own, partition_count, named=f"{_CALL}: partition[{i}]")
            for i, own in enumerate(listed)
        ),
    )


class _Segment(NamedTuple):
    """Records queued together in one producer batch."""

    future: asyncio.Future[BatchOutcome]
    first: int  # the offset of the first in the batch
    partition: int
    span: Span  # which records, count = stop - start


async def queue(
    accumulator: RecordAccumulator,
    records: Columns,
    found: list[Route],
    *,
    topic: str,
    partition_count: int,
    sticky: StickyPartitioner,
    total: int,
    deadline: Callable[[], float],
) -> list[_Segment]:
    """Queue every record of ``found`` (``total``: their memory), in order, waiting for room
    as it goes (see the module doc); the segments queued."""
    segments: list[_Segment] = []
    reserved = 0
    left = total
    quantum = min(RESERVE, accumulator.buffer_memory // 4)
    try:
        for partition, span in found:
            pos = span.start
            while pos < span.stop:
                if partition is None:
                    chosen, soft_room = sticky.current(topic, partition_count)
                else:
                    chosen, soft_room = partition, -1
                batch, first, taken, used, upcoming = accumulator.append_columns(
                    topic,
                    chosen,
                    records,
                    Span(span.order, pos, span.stop),
                    reserved=reserved,
                    soft_room=soft_room,
                )
                if batch is None:  # room for the next record first
                    more = max(upcoming, min(quantum, left)) - reserved
                    await accumulator.reserve(more, deadline())
                    reserved += more
                    continue
                segments.append(
                    _Segment(batch.future, first, chosen, Span(span.order, pos, pos + taken))
                )
                pos += taken
                reserved -= used
                left -= used
                if partition is None:
                    sticky.add(topic, used)
                if first == 0:  # a batch started: let the sender take the one before
                    await asyncio.sleep(0)
    finally:
        if reserved:
            accumulator.unreserve(reserved)
    return segments


class SentBatch:
    """Where the records of one ``send_batch`` were written."""

    __slots__ = ("_results", "_segments", "count", "first_offsets", "topic")

    def __init__(
        self,
        topic: str,
        count: int,
        segments: Sequence[_Segment],
        results: Mapping[int, BatchResult | BaseException],
    ) -> None:
        self.topic = topic
        self.count = count
        self._segments = segments
        self._results = results  # by segment index
        first: dict[int, int] = {}
        for index, segment in enumerate(segments):
            result = results[index]
            if segment.partition not in first and isinstance(result, BatchResult):
                first[segment.partition] = _offset(result, segment.first)
        self.first_offsets: Mapping[int, int] = first
        """Per partition, the offset of the call's first record there (delivered), -1 when
        the broker did not say (acks=0, or a retried batch the broker already had)."""

    def partitions(self) -> list[int]:
        """Each record's partition, in the order the records were given."""
        out = [0] * self.count
        for segment in self._segments:
            for index in _indexes(segment.span):
                out[index] = segment.partition
        return out

    def offsets(self) -> list[int]:
        """Each record's offset (-1: unknown, or not delivered), in the order given."""
        out = [-1] * self.count
        for number, segment in enumerate(self._segments):
            result = self._results[number]
            if isinstance(result, BatchResult) and result.base_offset >= 0:
                base = result.base_offset + segment.first
                for at, index in enumerate(_indexes(segment.span)):
                    out[index] = base + at
        return out


def _offset(result: BatchResult, first: int) -> int:
    return -1 if result.base_offset < 0 else result.base_offset + first


def _indexes(span: Span) -> Sequence[int]:
    if span.order is None:
        return range(span.start, span.stop)
    return array("i", span.order)[span.start : span.stop]


class SendBatchError(KafkawireError):
    """Some records of a ``send_batch`` were not delivered: ``errors[i]`` is record ``i``'s
    error (``None`` for one delivered), and ``sent`` where the delivered ones went."""

    def __init__(self, message: str, errors: list[BaseException | None], sent: SentBatch) -> None:
        super().__init__(message)
        self.errors = errors
        self.sent = sent


class BatchDelivery:
    """What ``send_batch`` returns: ``await`` it for the :class:`SentBatch`, or the
    :class:`SendBatchError` naming each record's error."""

    __slots__ = ("_count", "_segments", "_topic")

    def __init__(self, topic: str, count: int, segments: list[_Segment]) -> None:
        self._topic = topic
        self._count = count
        self._segments = segments

    def done(self) -> bool:
        """Whether every record was delivered or failed (awaiting would not wait)."""
        return all(segment.future.done() for segment in self._segments)

    def __await__(self) -> Generator[Any, None, SentBatch]:
        pending = {s.future for s in self._segments if not s.future.done()}
        if pending:  # asyncio.wait never cancels what it waits for: cancelled, only the wait ends
            yield from asyncio.wait(pending).__await__()
        return self.result()

    def result(self) -> SentBatch:
        """The result of a delivery that is done (``InvalidStateError`` before)."""
        segments = [piece for segment in self._segments for piece in _parts_of(segment)]
        results: dict[int, BatchResult | BaseException] = {}
        failed: BaseException | None = None
        for index, segment in enumerate(segments):
            future = segment.future
            error = future.exception() if not future.cancelled() else asyncio.CancelledError()
            if error is None:
                outcome = future.result()
                assert isinstance(outcome, BatchResult)  # a split's parts are in segments
                results[index] = outcome
            else:
                results[index] = error
            failed = failed or error
        sent = SentBatch(self._topic, self._count, segments, results)
        if failed is None:
            return sent
        raise self._error(segments, results, failed, sent)

    def _error(
        self,
        segments: Sequence[_Segment],
        results: Mapping[int, BatchResult | BaseException],
        failed: BaseException,
        sent: SentBatch,
    ) -> SendBatchError:
        errors: list[BaseException | None] = [None] * self._count
        for index, segment in enumerate(segments):
            result = results[index]
            if isinstance(result, BaseException):
                for record in _indexes(segment.span):
                    errors[record] = result
        count = sum(error is not None for error in errors)
        error = SendBatchError(
            f"send_batch(): {count} of {self._count} records to {self._topic!r} were not "
            f"delivered: {failed!r}",
            errors,
            sent,
        )
        error.__cause__ = failed
        return error


def _parts_of(segment: _Segment) -> list[_Segment]:
    """``segment`` as the segments of the batches that delivered its records: itself, or,
    when its batch was split after MESSAGE_TOO_LARGE, the parts holding them (in turn)."""
    future = segment.future
    if future.cancelled() or future.exception() is not None:
        return [segment]
    split = future.result()
    if not isinstance(split, SplitResult):
        return [segment]
    pieces: list[_Segment] = []
    first, end = segment.first, segment.first + segment.span.stop - segment.span.start
    pos = segment.span.start
    for (start, stop), part in zip(itertools.pairwise(split.bounds), split.futures, strict=True):
        taken = min(end, stop) - max(first, start)
        if taken > 0:
            span = Span(segment.span.order, pos, pos + taken)
            pieces += _parts_of(_Segment(part, max(first, start) - start, segment.partition, span))
            pos += taken
    return pieces
