"""The frozen values that decoding yields: batches, records, headers, and the codec ids.

Invariants:

- a :class:`Record` always carries its *absolute* offset and timestamp: the decoder adds the
  batch's base offset and base timestamp to the deltas (v2), resolves relative inner offsets
  (magic 1 wrappers), and applies log-append time (every record then has the batch's max
  timestamp, or the wrapper's timestamp);
- a batch's ``records`` are decoded on first use, all at once, and then kept: a consumer that
  skips a batch (an aborted transaction, an offset before its position) never pays for its
  decompression; decoding errors therefore surface on that first use;
- ``records`` compares equal to a tuple of the same records, so batches are plain values.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar, overload

from .errors import CorruptRecordError

__all__ = [
    "NO_TIMESTAMP",
    "Batch",
    "BytesLike",
    "Compression",
    "Header",
    "LazyRecords",
    "LegacyRecordBatch",
    "Record",
    "RecordBatch",
    "RecordsAs",
    "TimestampType",
]

BytesLike = bytes | bytearray | memoryview
"""What the codecs and decoders read: any contiguous bytes buffer."""

NO_TIMESTAMP = -1
"""The timestamp of a magic 0 record, and of an empty v2 batch (Kafka's ``NO_TIMESTAMP``)."""

_CODEC_MASK = 0x07
_TIMESTAMP_TYPE_BIT = 0x08
_TRANSACTIONAL_BIT = 0x10
_CONTROL_BIT = 0x20


class Compression(enum.IntEnum):
    """The codec id in the low three bits of a batch's (or wrapper message's) attributes."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(enum.IntEnum):
    """Attribute bit 3: who set the timestamps (meaningless for magic 0, which has none)."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


@dataclass(frozen=True, slots=True)
class Header:
    """A record header: a string key and a nullable value (v2 records only)."""

    key: str
    value: bytes | None


@dataclass(frozen=True, slots=True)
class Record:
    """One record with its absolute offset and timestamp (``NO_TIMESTAMP`` for magic 0)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()


def _twin(cls: type[Any]) -> type[Any]:
    """A mutable class with ``cls``'s slot layout, for the decoders' fast construction.

    The hot loops fill a twin's slots and then assign ``__class__ = cls``: a fraction of the
    cost of a frozen dataclass ``__init__`` (which goes through ``object.__setattr__`` per
    field). The probe below fails at import time if the layouts ever stop matching.
    """
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": cls.__slots__})
    probe = twin()
    probe.__class__ = cls
    return twin


RecordTwin = _twin(Record)
HeaderTwin = _twin(Header)


class RecordsAs(NamedTuple):
    """How :meth:`LazyRecords.read_into` builds records: as instances of ``cls``, a slotted
    class whose fields are a record's (``offset``, ``timestamp``, ``key``, ``value``,
    ``headers``) and ``names``, set to ``values`` (the same for every record of a batch)."""

    cls: type[Any]
    names: tuple[str, ...]
    values: tuple[Any, ...]


ReadInto = Callable[[list[Any], RecordsAs, int], int]
"""``read_into(out, shape, start)``: see :meth:`LazyRecords.read_into`."""
T = TypeVar("T")
ReadSection = Callable[[Callable[..., T]], T]
"""``read_section(read)``: see :meth:`LazyRecords.read_section`."""

_INT64_MAX = (1 << 63) - 1


class LazyRecords(Sequence[Record]):
    """The records of one batch: decoded by ``decode`` on first use, then kept.

    ``decode`` is dropped once it has run, which releases the batch payload it refers to.
    ``decode_into``, where the format has one, builds records of another class straight from
    the payload (see :meth:`read_into`); ``read_section`` hands the payload to any reader
    (see :meth:`read_section`).
    """

    __slots__ = ("_decode", "_decode_into", "_read_section", "_records")

    def __init__(
        self,
        decode: Callable[[], tuple[Record, ...]],
        decode_into: ReadInto | None = None,
        read_section: ReadSection[Any] | None = None,
    ) -> None:
        self._decode: Callable[[], tuple[Record, ...]] | None = decode
        self._decode_into = decode_into
        self._read_section = read_section
        self._records: tuple[Record, ...] | None = None

    def read_section(self, read: Callable[..., T]) -> T | None:
        """``read(buf, *, base_offset, base_timestamp, log_append_time, count)`` on the
        batch's records section (decompressed; the arguments as
        :func:`~kafkawire.records.v2_records.read_records` takes them), its errors named by
        the batch as decoding names them; ``None`` where the format has no such section
        (legacy message sets), without calling ``read``. ``buf`` is a bytes-like object: an
        uncompressed section is handed as a ``memoryview`` of the batch's bytes, uncopied."""
        if self._read_section is None:
            return None
        result: T = self._read_section(read)
        return result

    def read_into(self, out: list[Any], shape: RecordsAs, start: int) -> int:
        """Append to ``out`` the records from offset ``start`` on, each offset once and in
        increasing order (one below ``start`` or below one appended before it is skipped),
        built as ``shape`` says. The offset after the last appended (``start`` if none
        was).

        Built straight from the payload where the format can (no :class:`Record` is made,
        and none is kept), else from :attr:`records`. A batch that cannot be decoded raises
        its error, ``out`` then maybe holding records appended before it (drop them).
        """
        if self._records is None and self._decode_into is not None:
            return self._decode_into(out, shape, start)
        return records_into(self._all(), out, shape, start)

    def _all(self) -> tuple[Record, ...]:
        records = self._records
        if records is None:
            assert self._decode is not None
            records = self._records = self._decode()
            self._decode = None
        return records

    def __len__(self) -> int:
        return len(self._all())

    @overload
    def __getitem__(self, index: int) -> Record: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Record, ...]: ...

    def __getitem__(self, index: int | slice) -> Record | tuple[Record, ...]:
        return self._all()[index]

    def __iter__(self) -> Iterator[Record]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyRecords):
            return self._all() == other._all()
        if isinstance(other, tuple):
            return self._all() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        if self._records is None:
            return "LazyRecords(<not decoded yet>)"
        return f"LazyRecords({self._records!r})"


def records_into(records: Sequence[Record], out: list[Any], shape: RecordsAs, start: int) -> int:
    """:meth:`LazyRecords.read_into` from decoded records."""
    cls = shape.cls
    extras = tuple(zip(shape.names, shape.values, strict=True))
    for record in records:
        offset = record.offset
        if offset > _INT64_MAX or offset < -_INT64_MAX - 1:
            raise CorruptRecordError("a record offset does not fit in int64")
        if offset < start:  # before the position, or an offset repeated (a broken batch)
            continue
        start = min(offset + 1, _INT64_MAX)
        made = object.__new__(cls)
        for name, value in (
            ("offset", offset),
            ("timestamp", record.timestamp),
            ("key", record.key),
            ("value", record.value),
            ("headers", record.headers),
            *extras,
        ):
            object.__setattr__(made, name, value)
        out.append(made)
    return start


class _Attributes:
    """What both batch formats derive from their ``attributes`` byte(s)."""

    __slots__ = ()
    attributes: int

    @property
    def compression(self) -> Compression:
        """The codec of the payload (checked to be a known one when the batch was decoded)."""
        return Compression(self.attributes & _CODEC_MASK)

    @property
    def timestamp_type(self) -> TimestampType:
        """Whether the timestamps are the producer's (create time) or the broker's (log-append
        time)."""
        if self.attributes & _TIMESTAMP_TYPE_BIT:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME


@dataclass(frozen=True, slots=True)
class RecordBatch(_Attributes):
    """A v2 record batch (magic 2, Kafka >= 0.11): its header fields and its records.

    The fields are the header's, in wire order (the decoder relies on it), then ``records``.

    ``batch_length`` counts the bytes after the length field itself, so the whole batch takes
    ``batch_length + 12`` bytes. ``crc`` is the crc32c of everything from ``attributes`` to the
    end of the batch.
    """

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int
    records: Sequence[Record]

    @property
    def is_transactional(self) -> bool:
        """A batch written in a transaction (read_committed consumers skip it if it aborted)."""
        return bool(self.attributes & _TRANSACTIONAL_BIT)

    @property
    def is_control(self) -> bool:
        """A batch of control records (transaction markers), which consumers do not return."""
        return bool(self.attributes & _CONTROL_BIT)

    @property
    def last_offset(self) -> int:
        """The offset of the batch's last record."""
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        """The offset a consumer fetches next, even if records were compacted away."""
        return self.base_offset + self.last_offset_delta + 1


@dataclass(frozen=True, slots=True)
class LegacyRecordBatch(_Attributes):
    """One top-level message of a legacy message set (magic 0 or 1) and the records it holds.

    An uncompressed message holds one record, itself. A compressed (wrapper) message holds the
    records of the message set in its value; ``offset`` is then the offset of the *last* inner
    record, as Kafka assigns it. ``crc`` is the crc32 from ``magic`` to the end of the message;
    ``timestamp`` is ``NO_TIMESTAMP`` for magic 0.
    """

    offset: int
    message_size: int
    crc: int
    magic: int
    attributes: int
    timestamp: int
    records: Sequence[Record]

    @property
    def last_offset(self) -> int:
        """The offset of the last record held (the message's own offset)."""
        return self.offset

    @property
    def next_offset(self) -> int:
        """The offset a consumer fetches next."""
        return self.offset + 1


Batch = RecordBatch | LegacyRecordBatch
"""What :func:`~kafkawire.records.decode_batches` yields: a buffer may mix both formats."""
