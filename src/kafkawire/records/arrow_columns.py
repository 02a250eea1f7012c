"""Records as Arrow column buffers, for readers that hand records on as Arrow arrays (the
Spark data source), with no Python object per record.

:class:`RecordColumns` takes the batches of a fetched records field one after the other
(:func:`add_fetched`, or :meth:`RecordColumns.add_batch` batch by batch) and
:meth:`~RecordColumns.finish` gives the buffers of the rows kept, in Arrow's layouts, as
``bytes`` (pyarrow is not imported here: ``pyarrow.py_buffer`` wraps them as they are):

- ``offsets`` and ``timestamps``: int64 each (timestamps in microseconds since the epoch:
  the record's milliseconds times 1000, wrapping on overflow as Arrow's multiply does);
  ``timestamp_types``: int32 each (0 create time, 1 log-append time);
- keys and values (:class:`BinaryBuffers`): a binary array's validity bitmap (``None`` when
  no item is null), its int32 offsets and its data;
- headers (:class:`HeaderBuffers`, when asked for): a list array's int32 offsets into a
  struct array of header keys (a string array, never null) and values (a binary array);
  a record without headers has an empty list.

Rows are what the records give, in order: records are read and checked as
:func:`~kafkawire.records.v2_records.read_records` reads them (the same
:class:`~kafkawire.records.CorruptRecordError`, naming the batch), and a record is a row when
``start <= offset < end``. A batch that fails adds nothing. :func:`add_fetched` applies a
fetch's aborted transactions as a read_committed consumer does and never returns control
batches (see :mod:`.transactions`).

The compiled twin (``_accel.RecordColumns``, ``_arrow_columns.h``) reads each v2 records
section in one C loop; :class:`RecordColumnsPure`, the fallback, builds the same buffers from
decoded :class:`~kafkawire.records.Record` values. Legacy message sets (magic 0 and 1) have
no v2 section: their records are written into one first (:func:`legacy_section`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any, NamedTuple, cast

from kafkawire._extensions import load_optional

from .errors import CorruptRecordError
from .model import Batch, BytesLike, LazyRecords, Record, RecordBatch
from .reader import decode_batches
from .transactions import AbortedTransactionLike, ReadCommittedFilter
from .v2_records import ACCELERATED as _RECORDS_ACCELERATED
from .v2_records import encode_record, read_records
from .varint import INT64_MAX, INT64_MIN, small_varints

__all__ = [
    "ACCELERATED",
    "BinaryBuffers",
    "ColumnBuffers",
    "HeaderBuffers",
    "RecordColumns",
    "RecordColumnsPure",
    "add_fetched",
    "legacy_section",
]

_UINT64 = 1 << 64


class BinaryBuffers(NamedTuple):
    """An Arrow binary (or string) array's buffers."""

    validity: bytes | None  # a bit per item, least significant first: 1 not null; None: no nulls
    null_count: int
    offsets: bytes  # int32, one more than the items, the first 0
    data: bytes


class HeaderBuffers(NamedTuple):
    """A list<struct<key: string, value: binary>> array's buffers."""

    lists: bytes  # int32: each row's first header, then the end
    keys: BinaryBuffers
    values: BinaryBuffers


class ColumnBuffers(NamedTuple):
    """What :meth:`RecordColumns.finish` gives: ``rows`` rows of each column."""

    rows: int
    offsets: bytes
    timestamps: bytes
    timestamp_types: bytes
    keys: BinaryBuffers
    values: BinaryBuffers
    headers: HeaderBuffers | None  # None unless asked for


class _Binary:
    """A binary column being filled (the pure twin's)."""

    __slots__ = ("data", "nulls", "offsets", "valid")

    def __init__(self) -> None:
        self.valid: list[bool] = []
        self.offsets = array("i", [0])
        self.data = bytearray()
        self.nulls = 0

    def put(self, item: bytes | None) -> None:
        self.valid.append(item is not None)
        if item is None:
            self.nulls += 1
        else:
            self.data += item
        if len(self.data) > _INT32_MAX:
            raise OverflowError("more than 2 GiB of keys, values or headers in one set of columns")
        self.offsets.append(len(self.data))

    def buffers(self) -> tuple[bytes | None, int, bytes, bytes]:
        validity = None
        if self.nulls:
            bits = bytearray((len(self.valid) + 7) // 8)
            for index, valid in enumerate(self.valid):
                if valid:
                    bits[index >> 3] |= 1 << (index & 7)
            validity = bytes(bits)
        return validity, self.nulls, self.offsets.tobytes(), bytes(self.data)


_INT32_MAX = (1 << 31) - 1


class RecordColumnsPure:
    """The compiled ``RecordColumns``' twin: the same buffers, built from decoded records.

    ``append`` takes a v2 records section as ``read_records`` does, plus the offsets to keep
    (``start <= offset < end``) and the batch's timestamp type; it returns the rows it added.
    ``finish`` returns the buffers as a plain tuple (:class:`ColumnBuffers`' fields, nested
    ones as tuples) and empties the columns.
    """

    def __init__(self, include_headers: bool) -> None:
        self._include_headers = include_headers
        self._reset()

    def _reset(self) -> None:
        self._offsets = array("q")
        self._timestamps = array("q")
        self._types = array("i")
        self._keys, self._values = _Binary(), _Binary()
        self._lists = array("i", [0])
        self._header_keys, self._header_values = _Binary(), _Binary()

    def __len__(self) -> int:
        return len(self._offsets)

    def append(
        self,
        buf: BytesLike,
        *,
        base_offset: int,
        base_timestamp: int,
        log_append_time: int | None,
        count: int,
        start: int,
        end: int,
        timestamp_type: int,
    ) -> int:
        records = read_records(
            bytes(buf),
            base_offset=base_offset,
            base_timestamp=base_timestamp,
            log_append_time=log_append_time,
            count=count,
        )
        if any(not INT64_MIN <= r.offset <= INT64_MAX for r in records):
            raise CorruptRecordError("a record offset does not fit in int64")
        kept = [r for r in records if start <= r.offset < end]
        if any(not INT64_MIN <= r.timestamp <= INT64_MAX for r in kept):
            raise CorruptRecordError("a record timestamp does not fit in int64")
        for record in kept:  # checked above: nothing below fails but memory
            self._put(record, timestamp_type)
        return len(kept)

    def _put(self, record: Record, timestamp_type: int) -> None:
        micros = (record.timestamp * 1000) % _UINT64
        self._offsets.append(record.offset)
        self._timestamps.append(micros - _UINT64 if micros > INT64_MAX else micros)
        self._types.append(timestamp_type)
        self._keys.put(record.key)
        self._values.put(record.value)
        if self._include_headers:
            for header in record.headers:
                self._header_keys.put(header.key.encode())
                self._header_values.put(header.value)
            self._lists.append(len(self._header_keys.offsets) - 1)

    def finish(self) -> tuple[Any, ...]:
        headers = None
        if self._include_headers:
            headers = (
                self._lists.tobytes(),
                self._header_keys.buffers(),
                self._header_values.buffers(),
            )
        result = (
            len(self._offsets),
            self._offsets.tobytes(),
            self._timestamps.tobytes(),
            self._types.tobytes(),
            self._keys.buffers(),
            self._values.buffers(),
            headers,
        )
        self._reset()
        return result


def _load_compiled() -> type[RecordColumnsPure] | None:
    """The compiled class, where ``_accel`` is in use (set up by :mod:`.v2_records`)."""
    if not _RECORDS_ACCELERATED:
        return None
    from . import _accel

    # The compiled class has the pure one's interface (the stub says so) without deriving
    # from it: typed as the pure class, as builder.py types EncodedRecords.
    return cast("type[RecordColumnsPure]", _accel.RecordColumns)


_COMPILED = load_optional("kafkawire.records._accel", _load_compiled)
ACCELERATED = _COMPILED is not None
"""Whether :class:`RecordColumns` reads sections in C."""


class RecordColumns:
    """Rows of records as Arrow column buffers (see the module doc), batch after batch.

    ``builder`` picks the twin that reads the sections (the compiled one where it is built);
    tests pass :class:`RecordColumnsPure` to compare them.
    """

    __slots__ = ("_builder",)

    def __init__(
        self, include_headers: bool, *, builder: type[RecordColumnsPure] | None = None
    ) -> None:
        chosen = builder or _COMPILED or RecordColumnsPure
        self._builder = chosen(include_headers)

    def __len__(self) -> int:
        """The rows added since the last :meth:`finish`."""
        return len(self._builder)

    def add_batch(self, batch: Batch, start: int, end: int) -> int:
        """Add the records of ``batch`` with ``start <= offset < end``; how many. A batch
        entirely outside is not decoded."""
        if batch.last_offset < start or (
            isinstance(batch, RecordBatch) and batch.base_offset >= end
        ):
            return 0
        read = partial(
            self._builder.append, start=start, end=end, timestamp_type=int(batch.timestamp_type)
        )
        records = batch.records
        if isinstance(records, LazyRecords):
            added: int | None = records.read_section(read)
            if added is not None:
                return added
        return int(read(**legacy_section(records)))

    def finish(self) -> ColumnBuffers:
        """The buffers of the rows added; the columns are empty again."""
        rows, offsets, timestamps, types, keys, values, headers = self._builder.finish()
        return ColumnBuffers(
            rows,
            offsets,
            timestamps,
            types,
            BinaryBuffers(*keys),
            BinaryBuffers(*values),
            None
            if headers is None
            else HeaderBuffers(headers[0], BinaryBuffers(*headers[1]), BinaryBuffers(*headers[2])),
        )


def add_fetched(
    columns: RecordColumns,
    records: BytesLike,
    aborted_transactions: Iterable[AbortedTransactionLike] | None,
    *,
    start: int,
    end: int,
) -> int:
    """Add to ``columns`` the records of a Fetch response partition's ``records`` that a
    consumer at ``start`` returns (control batches never, aborted transactions' records not
    when the response lists them) with offsets below ``end``; the offset to fetch next."""
    visible = ReadCommittedFilter(aborted_transactions).accepts
    next_offset = start
    for batch in decode_batches(records):
        next_offset = max(next_offset, batch.next_offset)
        if visible(batch):
            columns.add_batch(batch, start, end)
    return next_offset


def legacy_section(records: Sequence[Record]) -> dict[str, Any]:
    """Decoded records (a legacy message set's) as the arguments of a v2 records section
    that holds them: ``buf``, ``base_offset``, ``base_timestamp``, ``log_append_time``
    (None: each record keeps its timestamp) and ``count``."""
    base_offset = records[0].offset if records else 0
    base_timestamp = records[0].timestamp if records else 0
    small = small_varints()
    buf = b"".join(
        encode_record(
            r.offset - base_offset,
            r.timestamp - base_timestamp,
            r.key,
            r.value,
            headers=r.headers,
            small=small,
        )
        for r in records
    )
    return {
        "buf": buf,
        "base_offset": base_offset,
        "base_timestamp": base_timestamp,
        "log_append_time": None,
        "count": len(records),
    }
