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
from collections.abc import Callable, Sequence
from typing import Protocol

from kafkawire._extensions import load_optional

from .errors import CorruptRecordError
from .model import Header, HeaderTwin, Record, RecordTwin
from .varint import SMALL_VARINT_LIMIT, encode_varint, read_raw, read_varint

__all__ = [
    "ACCELERATED",
    "ReadRecordsFunction",
    "encode_headers",
    "encode_record",
    "encode_record_compiled",
    "read_records",
    "read_records_pure",
]

ReadRecords = Callable[[bytes, int, int, int], tuple[Record, ...]]


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


def _load_compiled() -> tuple[ReadRecordsFunction, EncodeRecordFunction]:
    """The C loop, set up for this module's classes, and the C record encoder (see
    :func:`load_optional`)."""
    from . import _accel

    _accel.setup(Record, Header, CorruptRecordError)
    encode = getattr(_accel, "encode_record", None)
    if encode is None:  # a build from before it had one: TypeError is what warns
        raise TypeError("the build predates encode_record; reinstall kafkawire")
    return _accel.read_records, encode


_COMPILED = load_optional("kafkawire.records._accel", _load_compiled)
ACCELERATED = _COMPILED is not None
"""Whether :data:`read_records` is the compiled loop (and records without headers are encoded
in C)."""
read_records: ReadRecordsFunction = read_records_pure if _COMPILED is None else _COMPILED[0]
encode_record_compiled: EncodeRecordFunction | None = None if _COMPILED is None else _COMPILED[1]


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


EncodeRecordFunction = Callable[[int, int, "bytes | None", "bytes | None"], bytes]
"""The compiled :func:`encode_record` for a record without headers: it takes only bytes (or
``None``) and 64-bit deltas, and raises TypeError or OverflowError for anything else."""
