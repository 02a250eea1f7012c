"""Record batch v2 (magic 2): the header, its crc32c, and the varint-encoded records.

Layout (all big-endian), as in Kafka's protocol documentation: ::

    baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 (2)
    | crc uint32 | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64
    | maxTimestamp int64 | producerId int64 | producerEpoch int16 | baseSequence int32
    | recordsCount int32 | records (compressed as a whole when attributes say so)

    record: length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
            | keyLength varint | key | valueLength varint | value
            | headersCount varint | (headerKeyLength varint | key | headerValueLength varint
            | value) ...

Invariants:

- ``batchLength`` counts the bytes after itself: the batch is ``batchLength + 12`` bytes;
- ``crc`` is crc32c (Castagnoli) of the bytes from ``attributes`` to the end of the batch,
  the compressed form when compressed; the partition leader epoch is outside it, so a broker
  can stamp it without recomputing the crc;
- attributes: bits 0-2 codec, bit 3 timestamp type, bit 4 transactional, bit 5 control,
  bit 6 delete horizon (compaction); a record's own attributes byte is unused (0);
- lengths of -1 mean null (key, value, header value); a header key is never null;
- decoding checks every record's length against the bytes it used, and that ``recordsCount``
  records use up the payload exactly.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple, Protocol, TypeVar

from .budget import DecompressionBudget
from .compression import compress
from .errors import CorruptRecordError, InvalidRecordError, RecordsError, UnsupportedCodecError
from .model import BytesLike, Compression, LazyRecords, Record, RecordBatch, RecordsAs
from .v2_records import read_records, read_records_into

__all__ = ["HEADER", "MIN_BATCH_LENGTH", "decode_batch", "encode_batch"]


def _load_crc32c(data: BytesLike, value: int = 0, /) -> int:
    """Import crc32c at the first checksum, then let ``crc32c`` name its function directly.

    Importing the crc32c package reads its version through importlib.metadata and loads
    argparse for its command line, about 30 ms that ``import kafkawire.client`` need not pay;
    after the first call the module global is crc32c's own C function, so later checksums
    cost what they did with a top-level import.
    """
    global crc32c  # noqa: PLW0603 - replaced once by the function it stands for
    from crc32c import crc32c as loaded

    crc32c = loaded
    return loaded(data, value)


class _Checksum(Protocol):
    def __call__(self, data: BytesLike, value: int = 0, /) -> int: ...


crc32c: _Checksum = _load_crc32c
T = TypeVar("T")

HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")
_CRC_AT = 17
_ATTRIBUTES_AT = 21
_LOG_OVERHEAD = 12  # baseOffset + batchLength
MIN_BATCH_LENGTH = HEADER.size - _LOG_OVERHEAD
# The smallest record: length, attributes, timestamp delta, offset delta, key length, value
# length and header count, one byte each.
_MIN_RECORD_SIZE = 7
_MAX_CODEC = Compression.ZSTD
_CODEC_MASK = 0x07
_LOG_APPEND_TIME_BIT = 0x08


def decode_batch(
    data: memoryview, pos: int, end: int, *, check_crc: bool, budget: DecompressionBudget
) -> RecordBatch:
    """The v2 batch in ``data[pos:end]`` (its whole extent, as the batch length says).

    The caller has checked that the extent holds at least the header (``MIN_BATCH_LENGTH``).
    The header is read and the crc checked now; the records are decoded on first use.
    """
    header = HEADER.unpack_from(data, pos)
    base_offset, _, _, _, crc, attributes, _, base_timestamp, max_timestamp = header[:9]
    count = header[12]
    if check_crc and crc32c(data[pos + _ATTRIBUTES_AT : end]) != crc:
        raise CorruptRecordError("crc32c does not match the batch", base_offset)
    if attributes & _CODEC_MASK > _MAX_CODEC:
        raise UnsupportedCodecError(f"codec id {attributes & _CODEC_MASK}", base_offset)
    if count < 0:
        raise CorruptRecordError(f"negative records count {count}", base_offset)
    payload = _Payload(
        data[pos + HEADER.size : end],
        Compression(attributes & _CODEC_MASK),
        base_offset,
        base_timestamp,
        max_timestamp if attributes & _LOG_APPEND_TIME_BIT else None,
        count,
        budget,
    )
    records = LazyRecords(payload.decode, payload.decode_into, payload.read_in_place)
    return RecordBatch(*(*header, records))  # its fields: the header's in wire order, records


class _Payload(NamedTuple):
    """A batch's records section, and what decoding it needs."""

    data: memoryview
    codec: Compression
    base_offset: int
    base_timestamp: int
    log_append_time: int | None
    records_count: int
    budget: DecompressionBudget

    def decode(self) -> tuple[Record, ...]:
        return self.read(read_records)

    def decode_into(self, out: list[Any], shape: RecordsAs, start: int) -> int:
        cls, names, values = shape
        return self.read(
            partial(read_records_into, out=out, cls=cls, names=names, values=values, start=start)
        )

    def read_in_place(self, read: Callable[..., T]) -> T:
        """``read`` on the decompressed section (see ``LazyRecords.read_section``): an
        uncompressed one as the view of the fetched bytes it is, not copied into ``bytes``
        (for readers of any buffer, such as ``RecordColumns``)."""
        return self.read(read, in_place=True)

    def read(self, read: Callable[..., T], *, in_place: bool = False) -> T:
        """``read`` on the decompressed section, as ``bytes`` (the decoders slice ``bytes``
        faster than a ``memoryview``) unless ``in_place``."""
        try:
            if in_place and self.codec is Compression.NONE:
                buf: BytesLike = self.data
            else:
                buf = self.budget.decompress(self.codec, self.data)
            count = self.records_count
            if count > len(buf) // _MIN_RECORD_SIZE:
                raise CorruptRecordError(f"{count} records cannot fit in {len(buf)} bytes")
            return read(
                buf,
                base_offset=self.base_offset,
                base_timestamp=self.base_timestamp,
                log_append_time=self.log_append_time,
                count=count,
            )
        except RecordsError as exc:
            raise exc.at(self.base_offset) from None
        except IndexError:
            raise CorruptRecordError(
                "a record runs past the end of the batch", self.base_offset
            ) from None
        except UnicodeDecodeError:
            raise CorruptRecordError("a header key is not UTF-8", self.base_offset) from None


def encode_batch(
    records: bytes | bytearray | memoryview,
    *,
    count: int,
    compression: Compression,
    compression_level: int | None,
    attributes: int,
    base_offset: int,
    partition_leader_epoch: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
) -> bytes:
    """A whole v2 batch around the encoded ``records`` (``count`` of them), crc included.

    ``attributes`` carries every bit but the codec's, which comes from ``compression``.
    """
    payload = compress(compression, records, level=compression_level)
    try:
        header = bytearray(
            HEADER.pack(
                base_offset,
                HEADER.size - _LOG_OVERHEAD + len(payload),
                partition_leader_epoch,
                2,
                0,  # the crc, written below
                attributes | compression,
                last_offset_delta,
                base_timestamp,
                max_timestamp,
                producer_id,
                producer_epoch,
                base_sequence,
                count,
            )
        )
    except struct.error as exc:
        raise InvalidRecordError(f"a batch header field is out of range: {exc}") from None
    _CRC.pack_into(header, _CRC_AT, crc32c(payload, crc32c(header[_ATTRIBUTES_AT:])))
    return bytes(header) + payload
