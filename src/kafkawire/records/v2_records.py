"""The records of a v2 batch: the decoding loop (generated once, at import) and the encoder.

A record (see :mod:`.batch_v2`) is ``length varint | attributes int8 | timestampDelta
varlong | offsetDelta varint | key | value | headers``, with key and value as ``length varint |
bytes`` (length -1 for null).

Decoding is the hot path of a consumer, so :func:`read_records` is one flat loop with every
varint decoded inline: its source is assembled here from two snippets (a varint, a nullable
byte string) and compiled at import, which keeps the one- to three-byte cases free of calls
without writing the same lines out six times. There are two compiled variants: create time
(``base timestamp + delta``) and log-append time (every record gets the batch's timestamp).

Invariants the loop keeps:

- a record's length must be non-negative and equal the bytes its fields use, and the records
  must use the whole section: with reads past the end raising ``IndexError``, that also
  rejects a length too short for the fields or past the end of the batch; key and value
  lengths below -1 are errors;
- records are built as slot twins (see :func:`~kafkawire.records.model._twin`), keys and
  values as ``bytes`` slices of the (decompressed or copied) payload;
- anything that runs past the end raises ``IndexError`` or :class:`CorruptRecordError`; the
  caller turns both into a :class:`CorruptRecordError` naming the batch.

The same loop exists compiled, in the optional C extension ``kafkawire.records._accel``, which
gives the same records and the same errors (already naming the batch). :data:`read_records` is
that one when the build compiled it and ``KAFKAWIRE_NO_EXTENSIONS`` is not set, else
:func:`read_records_pure`; :data:`ACCELERATED` says which.
"""

from __future__ import annotations

import linecache
import textwrap
from array import array
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

from kafkawire._extensions import load_optional

from .columns import NONE, ColumnSpec, items, timestamp_items
from .errors import CorruptRecordError, InvalidRecordError
from .model import (
    NO_TIMESTAMP,
    BytesLike,
    Header,
    HeaderTwin,
    Record,
    RecordsAs,
    RecordTwin,
    records_into,
)
from .varint import (
    INT64_MAX,
    INT64_MIN,
    SMALL_VARINT_LIMIT,
    encode_varint,
    read_raw,
    read_varint,
    small_varints,
)

__all__ = [
    "ACCELERATED",
    "EncodedRecords",
    "EncodedRecordsPure",
    "ReadRecordsFunction",
    "encode_headers",
    "encode_record",
    "measure_columns",
    "measure_columns_pure",
    "read_records",
    "read_records_into",
    "read_records_into_pure",
    "read_records_pure",
]

ReadRecords = Callable[[bytes, int, int, int], tuple[Record, ...]]
MeasureColumns = Callable[..., tuple[int, int, int]]
ReadRecordsInto = Callable[..., int]  # read_records_into_pure's keywords


class ReadRecordsFunction(Protocol):
    """The signature :func:`read_records_pure` and the compiled loop share."""

    def __call__(
        self,
        buf: bytes,
        *,
        base_offset: int,
        base_timestamp: int,
        log_append_time: int | None,
        count: int,
    ) -> tuple[Record, ...]: ...


_VARINT = """
raw = buf[{at0}]
if raw < 0x80:
    pos += {skip1}
else:
    more = buf[{at1}]
    if more < 0x80:
        raw += (more << 7) - 0x80
        pos += {skip2}
    else:
        last = buf[{at2}]
        if last < 0x80:
            raw += ((more - 0x80) << 7) + (last << 14) - 0x80
            pos += {skip3}
        else:
            raw, pos = read_raw(buf, {at0}, {bits})
"""

_NULLABLE = """
if raw == 1:
    {name} = None
elif raw & 1:
    raise CorruptRecordError(f"{name} length {{(raw >> 1) ^ -1}} before byte {{pos}}")
else:
    raw >>= 1
    {name} = buf[pos : pos + raw]
    pos += raw
"""

_LOOP = """
def read_records(buf, base_offset, base_timestamp, count):
    records = []
    append = records.append
    twin = RecordTwin
    record_class = Record
    end = len(buf)
    pos = 0
    for _ in range(count):
{length}
        if raw & 1:
            raise CorruptRecordError(f"record length {{(raw >> 1) ^ -1}} before byte {{pos}}")
        record_end = pos + (raw >> 1)
{timestamp_delta}
        timestamp = {timestamp}
{offset_delta}
        offset = base_offset + ((raw >> 1) ^ -(raw & 1))
{key_length}
{key}
{value_length}
{value}
        if buf[pos]:
            headers, pos = read_headers(buf, pos, record_end)
        else:
            headers = ()
            pos += 1
        if pos != record_end:
            raise CorruptRecordError(f"record ending at byte {{record_end}} used {{pos}}")
        record = twin()
        record.offset = offset
        record.timestamp = timestamp
        record.key = key
        record.value = value
        record.headers = headers
        record.__class__ = record_class
        append(record)
    if pos != end:
        raise CorruptRecordError(f"{{count}} records end at byte {{pos}} of {{end}}")
    return tuple(records)
"""


def _read_headers(buf: bytes, pos: int, record_end: int) -> tuple[tuple[Header, ...], int]:
    count, pos = read_varint(buf, pos)
    # Each header takes at least two bytes (key length, value length).
    if count < 0 or 2 * count > record_end - pos:
        raise CorruptRecordError(f"header count {count} before byte {pos}")
    headers = []
    for _ in range(count):
        length, pos = read_varint(buf, pos)
        if length < 0:
            raise CorruptRecordError(f"header key length {length} before byte {pos}")
        key = buf[pos : pos + length].decode()
        pos += length
        length, pos = read_varint(buf, pos)
        if length < -1:
            raise CorruptRecordError(f"header value length {length} before byte {pos}")
        header = HeaderTwin()
        header.key = key
        if length == -1:
            header.value = None
        else:
            header.value = buf[pos : pos + length]
            pos += length
        header.__class__ = Header
        headers.append(header)
    return tuple(headers), pos


def _varint(skip: int, bits: int) -> str:
    """The ``_VARINT`` snippet for a varint ``skip`` bytes past ``pos``, offsets folded."""
    at = [f"pos + {skip + i}" if skip + i else "pos" for i in range(3)]
    return _VARINT.format(
        at0=at[0], at1=at[1], at2=at[2], skip1=skip + 1, skip2=skip + 2, skip3=skip + 3, bits=bits
    )


def _compile(variant: str, timestamp: str) -> ReadRecords:
    def block(snippet: str) -> str:
        return textwrap.indent(snippet.strip("\n"), " " * 8)

    source = _LOOP.format(
        length=block(_varint(0, 32)),
        timestamp_delta=block(_varint(1, 64)),  # past the attributes byte
        timestamp=timestamp,
        offset_delta=block(_varint(0, 32)),
        key_length=block(_varint(0, 32)),
        key=block(_NULLABLE.format(name="key")),
        value_length=block(_varint(0, 32)),
        value=block(_NULLABLE.format(name="value")),
    )
    filename = f"<kafkawire.records v2 records, {variant}>"
    # Registered with linecache so tracebacks through the generated loop show its lines.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {
        "CorruptRecordError": CorruptRecordError,
        "Record": Record,
        "RecordTwin": RecordTwin,
        "read_headers": _read_headers,
        "read_raw": read_raw,
    }
    exec(compile(source, filename, "exec"), namespace)
    function: ReadRecords = namespace["read_records"]  # type: ignore[assignment]
    return function


_CREATE_TIME = _compile("create time", "base_timestamp + ((raw >> 1) ^ -(raw & 1))")
_LOG_APPEND_TIME = _compile("log-append time", "base_timestamp")


def read_records_pure(
    buf: bytes, *, base_offset: int, base_timestamp: int, log_append_time: int | None, count: int
) -> tuple[Record, ...]:
    """The ``count`` records in the uncompressed records section ``buf``, which they must fill.

    Offsets and timestamps come out absolute: ``base_offset + offset delta`` and
    ``base_timestamp + timestamp delta``, or ``log_append_time`` for every record when the
    batch has log-append time.
    """
    if log_append_time is None:
        return _CREATE_TIME(buf, base_offset, base_timestamp, count)
    return _LOG_APPEND_TIME(buf, base_offset, log_append_time, count)


def read_records_into_pure(
    buf: bytes,
    *,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    count: int,
    out: list[Any],
    cls: type[Any],
    names: tuple[str, ...],
    values: tuple[Any, ...],
    start: int,
) -> int:
    """:func:`read_records_pure`'s records from offset ``start`` on, as instances of ``cls``
    with ``names`` set to ``values``, appended to ``out`` (see
    :meth:`~kafkawire.records.model.LazyRecords.read_into`); the offset after the last
    appended."""
    records = read_records_pure(
        buf,
        base_offset=base_offset,
        base_timestamp=base_timestamp,
        log_append_time=log_append_time,
        count=count,
    )
    return records_into(records, out, RecordsAs(cls, names, values), start)


def _load_compiled() -> tuple[
    ReadRecordsFunction, type[EncodedRecordsPure], MeasureColumns, ReadRecordsInto
]:
    """The C loop, the C :class:`EncodedRecords` and the C :func:`measure_columns`, set up
    for this module's classes (see :func:`load_optional`)."""
    from . import _accel

    _accel.setup(Record, Header, CorruptRecordError, InvalidRecordError)
    # The compiled class has the pure one's interface (the stub says so) without deriving
    # from it: typed as the pure class, as builder.py's base.
    return (
        _accel.read_records,
        cast("type[EncodedRecordsPure]", _accel.EncodedRecords),
        _accel.measure_columns,
        _accel.read_records_into,
    )


def encode_headers(headers: Sequence[Header | tuple[str, bytes | None]]) -> bytes:
    """A record's headers section: the count, then each key and nullable value."""
    parts = [encode_varint(len(headers))]
    for header in headers:
        key, value = (header.key, header.value) if isinstance(header, Header) else header
        raw_key = key.encode()
        parts.append(encode_varint(len(raw_key)))
        parts.append(raw_key)
        parts.append(encode_varint(-1) if value is None else encode_varint(len(value)) + value)
    return b"".join(parts)


_SMALL = SMALL_VARINT_LIMIT
_NULL = b"\x01"  # varint -1
_NO_HEADERS = b"\x00"  # varint 0


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    *,
    headers: Sequence[Header | tuple[str, bytes | None]],
    small: tuple[bytes, ...],
) -> bytes:
    """One record, length prefix included; ``small`` is :func:`small_varints`.

    The common one- and two-byte varints are looked up in ``small`` (see there for why).
    """
    raw = (timestamp_delta << 1) ^ (timestamp_delta >> 63)
    body = b"\x00" + (small[raw] if raw < _SMALL else encode_varint(timestamp_delta))
    raw = offset_delta << 1
    body += small[raw] if raw < _SMALL else encode_varint(offset_delta)
    if key is None:
        body += _NULL
    else:
        raw = len(key) << 1
        body += (small[raw] if raw < _SMALL else encode_varint(len(key))) + key
    if value is None:
        body += _NULL
    else:
        raw = len(value) << 1
        body += (small[raw] if raw < _SMALL else encode_varint(len(value))) + value
    body += encode_headers(headers) if headers else _NO_HEADERS
    raw = len(body) << 1
    return (small[raw] if raw < _SMALL else encode_varint(len(body))) + body


class EncodedRecordsPure:
    """The records of a v2 batch being built, encoded as they are appended.

    Rules (the compiled twin, ``_accel.EncodedRecords``, keeps them byte for byte and error
    for error):

    - timestamp deltas count from the first record's timestamp, as Kafka's producer writes
      them; offset deltas are 0, 1, 2, ...;
    - keys, values and header values are bytes-like or ``None``; header keys are ``str``
      (written as UTF-8); headers are :class:`Header` or ``(key, value)`` tuples;
    - a record that cannot be written raises before anything changes: ``TypeError`` for a
      wrong type, :class:`InvalidRecordError` for a timestamp outside int64 or a delta
      outside a varlong.
    """

    __slots__ = ("_base_timestamp", "_buffer", "_count", "_max_timestamp", "_small")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._count = 0
        self._base_timestamp = NO_TIMESTAMP
        self._max_timestamp = NO_TIMESTAMP
        self._small = small_varints()

    def __len__(self) -> int:
        """The number of records appended so far."""
        return self._count

    @property
    def base_timestamp(self) -> int:
        """The first record's timestamp (-1 before one)."""
        return self._base_timestamp

    @property
    def max_timestamp(self) -> int:
        """The largest timestamp appended (-1 before one)."""
        return self._max_timestamp

    @property
    def encoded_size(self) -> int:
        """The length of :meth:`encoded`."""
        return len(self._buffer)

    def encoded(self) -> bytes:
        """The records appended so far, encoded."""
        return bytes(self._buffer)

    def append(
        self,
        key: BytesLike | None,
        value: BytesLike | None,
        *,
        timestamp: int,
        headers: Sequence[Header | tuple[str, BytesLike | None]] = (),
    ) -> int:
        """Append one record; return its offset delta."""
        if not isinstance(timestamp, int):
            raise TypeError(f"a record timestamp must be an int, not {type(timestamp).__name__}")
        if not INT64_MIN <= timestamp <= INT64_MAX:
            raise InvalidRecordError(f"timestamp {timestamp} does not fit in int64")
        delta = self._count
        base = self._base_timestamp if delta else timestamp
        if not INT64_MIN <= timestamp - base <= INT64_MAX:
            raise InvalidRecordError(f"{timestamp - base} does not fit in a varlong")
        key = _nullable_bytes(key, "key")
        value = _nullable_bytes(value, "value")
        pairs = _header_pairs(headers) if headers else ()
        self._buffer += encode_record(
            delta, timestamp - base, key, value, headers=pairs, small=self._small
        )
        self._count = delta + 1
        self._base_timestamp = base
        self._max_timestamp = max(self._max_timestamp, timestamp)
        return delta

    def append_columns(
        self,
        *,
        values: ColumnSpec,
        keys: ColumnSpec,
        headers: Sequence[Sequence[Header | tuple[str, BytesLike | None]] | None] | None,
        timestamps: ColumnSpec,
        timestamp: int,
        order: BytesLike | None,
        start: int,
        stop: int,
        room: int,
        soft_room: int,
        overhead: int,
        header_overhead: int,
    ) -> tuple[int, int, int]:
        """Append records ``start`` to ``stop`` (positions in ``order``, int32 record
        indexes, or in the columns themselves) while each one's measure fits in what is left
        of ``room`` and, before each, less than ``soft_room`` was used (-1: no soft bound);
        ``(appended, measure used, measure of the record that did not fit room, or 0)``.

        A record's measure is ``overhead`` plus its key's and value's lengths plus, per
        header, ``header_overhead`` and its key's (UTF-8) and value's lengths. ``timestamps``
        gives each record's timestamp, or ``timestamp`` is every record's. Records are
        checked as :meth:`append` checks them (keys and values must be bytes or ``None``);
        one that cannot be appended raises, the records before it staying appended.
        """
        count, key_items, value_items, stamps = _open_columns(values, keys, headers, timestamps)
        indexes = None if order is None else array("i", bytes(order))
        positions = count if indexes is None else len(indexes)
        if not 0 <= start <= stop <= positions:
            raise ValueError(f"records {start} to {stop} of {positions}")
        used = upcoming = 0
        pos = start
        while pos < stop:
            if 0 <= soft_room <= used:
                break
            index = pos if indexes is None else indexes[pos]
            if not 0 <= index < count:
                raise ValueError(f"order[{pos}] is {index}, not a record")
            key, value, record_headers = _record_at(key_items, value_items, headers, index)
            stamp = timestamp if stamps is None else _stamp(stamps, index)
            weight = _measure(
                key, value, record_headers, (overhead, header_overhead), self, timestamp=stamp
            )
            if 0 <= room - used < weight:
                upcoming = weight
                break
            self.append(key, value, timestamp=stamp, headers=record_headers or ())
            used += weight
            pos += 1
        return pos - start, used, upcoming


def measure_columns_pure(
    *,
    values: ColumnSpec,
    keys: ColumnSpec,
    headers: Sequence[Sequence[Header | tuple[str, BytesLike | None]] | None] | None,
    overhead: int,
    header_overhead: int,
) -> tuple[int, int, int]:
    """Every record checked as :meth:`EncodedRecordsPure.append_columns` takes it, without
    appending it; ``(total, largest, index of the largest or -1)`` of their measures."""
    count, key_items, value_items, _ = _open_columns(values, keys, headers, (NONE, None))
    total = largest = 0
    largest_at = -1
    probe = EncodedRecordsPure()
    for index in range(count):
        key, value, record_headers = _record_at(key_items, value_items, headers, index)
        try:
            weight = _measure(
                key, value, record_headers, (overhead, header_overhead), probe, timestamp=0
            )
        except TypeError as exc:
            raise TypeError(f"record {index}: {exc}") from None
        total += weight
        if weight > largest:
            largest, largest_at = weight, index
    return total, largest, largest_at


def _open_columns(
    values: ColumnSpec, keys: ColumnSpec, headers: Sequence[object] | None, timestamps: ColumnSpec
) -> tuple[int, Sequence[object], Sequence[object], Sequence[object] | None]:
    """The record count and the columns' items, checked for length as the C twin does."""
    if values[0] == NONE:
        raise TypeError("values: not a column of known length")
    value_items = items(values, 0)
    count = len(value_items)
    key_items = items(keys, count)
    if len(key_items) != count:
        raise ValueError(f"keys has {len(key_items)} items, not {count}")
    if headers is not None:
        if not isinstance(headers, list | tuple):
            raise TypeError("headers must be a list or tuple")
        if len(headers) != count:
            raise ValueError(f"headers has {len(headers)} items, not {count}")
    stamps = timestamp_items(timestamps)
    if stamps is not None and len(stamps) != count:
        raise ValueError(f"timestamps has {len(stamps)} items, not {count}")
    return count, key_items, value_items, stamps


def _record_at(
    keys: Sequence[object], values: Sequence[object], headers: Any, index: int
) -> tuple[bytes | None, bytes | None, Any]:
    """Record ``index``'s key, value (checked) and headers."""
    key, value = _column_item(keys, index, "keys"), _column_item(values, index, "values")
    return key, value, None if headers is None else headers[index]


def _column_item(column: Sequence[object], index: int, what: str) -> bytes | None:
    item = column[index]
    if item is not None and type(item) is not bytes:
        raise TypeError(f"{what}[{index}] must be bytes or None, not {type(item).__name__}")
    return item


def _stamp(stamps: Sequence[object], index: int) -> int:
    stamp = stamps[index]
    if not isinstance(stamp, int):
        raise TypeError(f"timestamps[{index}] must be an int, not {type(stamp).__name__}")
    if not INT64_MIN <= stamp <= INT64_MAX:
        raise InvalidRecordError(f"timestamp {stamp} does not fit in int64")
    return stamp


def _measure(
    key: bytes | None,
    value: bytes | None,
    headers: object,
    overheads: tuple[int, int],
    records: EncodedRecordsPure,
    *,
    timestamp: int,
) -> int:
    """A record's measure (see :meth:`EncodedRecordsPure.append_columns`; ``overheads``:
    per record and per header), raising first what appending it to ``records`` would raise
    (in the compiled twin's order)."""
    overhead, header_overhead = overheads
    base = records.base_timestamp if len(records) else timestamp
    if not INT64_MIN <= timestamp - base <= INT64_MAX:
        raise InvalidRecordError(f"{timestamp - base} does not fit in a varlong")
    weight = overhead + (len(key) if key is not None else 0) + (len(value) if value else 0)
    if headers:
        for name, data in _header_pairs(headers):
            weight += header_overhead + len(name.encode()) + (len(data) if data else 0)
    return weight


def _nullable_bytes(data: object, what: str) -> bytes | None:
    if data is None or type(data) is bytes:
        return data
    try:
        return bytes(memoryview(data))  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"a record {what} must be bytes-like or None, not {type(data).__name__}"
        ) from None


def _header_pairs(headers: object) -> list[tuple[str, bytes | None]]:
    try:
        items = list(headers)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError("headers must be a sequence") from None
    pairs = []
    for index, header in enumerate(items):
        if isinstance(header, tuple) and len(header) == 2:
            key, value = header
        elif isinstance(header, Header):
            key, value = header.key, header.value
        else:
            raise TypeError(
                f"headers[{index}] must be a Header or a (str, bytes or None) pair, "
                f"not {type(header).__name__}"
            )
        if not isinstance(key, str):
            raise TypeError(f"headers[{index}]'s key must be str, not {type(key).__name__}")
        key.encode()  # a key that is not UTF-8 (a lone surrogate) fails before anything changes
        pairs.append((key, _nullable_bytes(value, "header value")))
    return pairs


_COMPILED = load_optional("kafkawire.records._accel", _load_compiled)
ACCELERATED = _COMPILED is not None
"""Whether :data:`read_records` is the compiled loop and :data:`EncodedRecords` the compiled
class."""
read_records: ReadRecordsFunction = read_records_pure if _COMPILED is None else _COMPILED[0]
EncodedRecords: type[EncodedRecordsPure] = EncodedRecordsPure if _COMPILED is None else _COMPILED[1]
measure_columns: MeasureColumns = measure_columns_pure if _COMPILED is None else _COMPILED[2]
read_records_into: ReadRecordsInto = read_records_into_pure if _COMPILED is None else _COMPILED[3]
"""What a v2 batch builder appends records to: the compiled class where it is built."""
