"""Legacy message sets: magic 0 (Kafka 0.8-0.9) and magic 1 (0.10, with timestamps).

A message set is a sequence of messages; each is (big-endian) ::

    offset int64 | messageSize int32 | crc uint32 | magic int8 | attributes int8
    | timestamp int64 (magic 1 only) | keyLength int32 | key | valueLength int32 | value

Invariants:

- ``messageSize`` counts the bytes after itself; ``crc`` is the crc32 (zlib's) of the bytes
  from ``magic`` to the end of the message;
- attributes: bits 0-2 codec, bit 3 timestamp type (magic 1);
- a compressed message (a *wrapper*) has a null key and, as its value, a whole message set
  compressed with its codec. Inner messages have the wrapper's magic and no codec: wrappers
  nest exactly one level, and anything deeper is rejected;
- magic 0 inner messages carry absolute offsets. Magic 1 inner messages carry offsets relative
  to the set (0, 1, ...) and the wrapper carries the absolute offset of the *last* one, so
  ``absolute = wrapper offset - last relative offset + relative offset``, applied only when
  that base (wrapper offset - last relative offset) is not negative. Producers leave the
  wrapper at 0 for the broker to assign, and a set read back as they built it keeps its
  relative offsets (0, 1, ...), as Kafka's Java client (``AbstractLegacyRecordBatch``),
  kafka-python and aiokafka read it;
- a magic 1 wrapper with log-append time gives every inner record its own timestamp.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from functools import partial

from .budget import DecompressionBudget
from .compression import compress
from .errors import CorruptRecordError, InvalidRecordError, RecordsError, UnsupportedCodecError
from .model import NO_TIMESTAMP, Compression, LazyRecords, LegacyRecordBatch, Record

__all__ = ["MIN_MESSAGE_SIZE", "decode_message", "encode_message", "wrap_messages"]

_PREFIX = struct.Struct(">qiIbb")  # offset, messageSize, crc, magic, attributes
_HEAD = struct.Struct(">qiI")  # offset, messageSize, crc
_MAGIC_AND_ATTRIBUTES = struct.Struct(">bb")
_TIMESTAMP = struct.Struct(">q")
_LENGTH = struct.Struct(">i")
_OFFSET_AND_SIZE = struct.Struct(">qi")
_LOG_OVERHEAD = _OFFSET_AND_SIZE.size
_MAGIC_AT = 16  # where the crc'd bytes start
# After messageSize: crc, magic, attributes, (timestamp,) key length, value length.
MIN_MESSAGE_SIZE = {0: 14, 1: 22}
_CODEC_MASK = 0x07
_LOG_APPEND_TIME_BIT = 0x08


def _message(
    buf: bytes | memoryview, pos: int, end: int, check_crc: bool
) -> tuple[int, int, int, int, int, bytes | None, bytes | None]:
    """Offset, crc, magic, attributes, timestamp, key and value of the message at ``pos``.

    ``end`` is where the message ends by its size; raises :class:`CorruptRecordError` when the
    size is too small for the magic, the key and value do not fill it exactly, or (with
    ``check_crc``) the crc does not match.
    """
    offset, size, crc, magic, attributes = _PREFIX.unpack_from(buf, pos)
    if size < MIN_MESSAGE_SIZE[magic]:
        raise CorruptRecordError(f"message size {size} at offset {offset} is below its header")
    if check_crc and zlib.crc32(buf[pos + _MAGIC_AT : end]) != crc:
        raise CorruptRecordError(f"crc32 does not match the message at offset {offset}")
    pos += _PREFIX.size
    timestamp = NO_TIMESTAMP
    if magic == 1:
        (timestamp,) = _TIMESTAMP.unpack_from(buf, pos)
        pos += _TIMESTAMP.size
    key, pos = _nullable_bytes(buf, pos, end)
    value, pos = _nullable_bytes(buf, pos, end)
    if pos != end:
        raise CorruptRecordError(
            f"message at offset {offset} has {end - pos} bytes after its value"
        )
    return offset, crc, magic, attributes, timestamp, key, value


def _nullable_bytes(buf: bytes | memoryview, pos: int, end: int) -> tuple[bytes | None, int]:
    if pos + _LENGTH.size > end:
        raise CorruptRecordError(f"length at byte {pos} runs past the end of the message")
    (length,) = _LENGTH.unpack_from(buf, pos)
    pos += _LENGTH.size
    if length == -1:
        return None, pos
    if length < 0 or pos + length > end:
        raise CorruptRecordError(f"length {length} at byte {pos} does not fit the message")
    return bytes(buf[pos : pos + length]), pos + length


def decode_message(
    data: memoryview, pos: int, end: int, *, check_crc: bool, budget: DecompressionBudget
) -> LegacyRecordBatch:
    """The top-level legacy message in ``data[pos:end]`` (magic 0 or 1) as a batch.

    A plain message is a batch of one record; a wrapper's records are decompressed and decoded
    on first use.
    """
    offset, size = _OFFSET_AND_SIZE.unpack_from(data, pos)
    try:
        offset, crc, magic, attributes, timestamp, key, value = _message(data, pos, end, check_crc)
    except RecordsError as exc:
        raise exc.at(offset) from None
    codec = attributes & _CODEC_MASK
    records: Sequence[Record]
    if codec == Compression.NONE:
        records = (Record(offset, timestamp, key, value),)
    elif codec > Compression.ZSTD:
        raise UnsupportedCodecError(f"codec id {codec}", offset)
    elif value is None:
        raise CorruptRecordError("compressed message has a null value", offset)
    else:
        records = LazyRecords(
            partial(
                _decode_wrapped,
                value,
                codec=Compression(codec),
                magic=magic,
                wrapper_offset=offset,
                log_append_time=timestamp if attributes & _LOG_APPEND_TIME_BIT else None,
                check_crc=check_crc,
                budget=budget,
            )
        )
    return LegacyRecordBatch(offset, size, crc, magic, attributes, timestamp, records)


def _decode_wrapped(
    payload: bytes,
    *,
    codec: Compression,
    magic: int,
    wrapper_offset: int,
    log_append_time: int | None,
    check_crc: bool,
    budget: DecompressionBudget,
) -> tuple[Record, ...]:
    try:
        buf = budget.decompress(codec, payload, magic=magic)
        inner = _inner_messages(buf, magic, check_crc)
    except RecordsError as exc:
        raise exc.at(wrapper_offset) from None
    # Magic 1 inner offsets count from the set's start; the wrapper holds the last one's,
    # unless a producer left it unassigned (see the module's invariants).
    base = max(wrapper_offset - inner[-1][0], 0) if magic == 1 else 0
    return tuple(
        Record(base + offset, timestamp if log_append_time is None else log_append_time, k, v)
        for offset, timestamp, k, v in inner
    )


def _inner_messages(
    buf: bytes, magic: int, check_crc: bool
) -> list[tuple[int, int, bytes | None, bytes | None]]:
    inner = []
    pos = 0
    end = len(buf)
    while pos < end:
        if pos + _LOG_OVERHEAD > end:
            raise CorruptRecordError(f"inner message at byte {pos} is truncated")
        _, size = _OFFSET_AND_SIZE.unpack_from(buf, pos)
        message_end = pos + _LOG_OVERHEAD + size
        if size < MIN_MESSAGE_SIZE[0] or message_end > end:
            raise CorruptRecordError(f"inner message size {size} at byte {pos}")
        if buf[pos + _MAGIC_AT] != magic:
            raise CorruptRecordError(f"inner message magic {buf[pos + _MAGIC_AT]} != {magic}")
        offset, _, _, attributes, timestamp, key, value = _message(buf, pos, message_end, check_crc)
        if attributes & _CODEC_MASK:
            raise CorruptRecordError(f"inner message at offset {offset} is compressed again")
        inner.append((offset, timestamp, key, value))
        pos = message_end
    if not inner:
        raise CorruptRecordError("compressed message holds no messages")
    return inner


def encode_message(
    magic: int,
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    timestamp: int,
    attributes: int,
) -> bytes:
    """One legacy message, crc included (``timestamp`` is ignored for magic 0)."""
    parts = [_MAGIC_AND_ATTRIBUTES.pack(magic, attributes)]
    if magic == 1:
        try:
            parts.append(_TIMESTAMP.pack(timestamp))
        except struct.error:
            raise InvalidRecordError(f"timestamp {timestamp} is not an int64") from None
    for field in (key, value):
        if field is None:
            parts.append(_LENGTH.pack(-1))
        else:
            parts.append(_LENGTH.pack(len(field)))
            parts.append(field)
    body = b"".join(parts)
    try:
        head = _HEAD.pack(offset, _MAGIC_AT - _LOG_OVERHEAD + len(body), zlib.crc32(body))
    except struct.error:
        raise InvalidRecordError(f"offset {offset} is not an int64") from None
    return head + body


def wrap_messages(
    messages: bytes,
    *,
    magic: int,
    compression: Compression,
    compression_level: int | None,
    offset: int,
    timestamp: int,
    attributes: int,
) -> bytes:
    """A wrapper message whose value is ``messages`` (an encoded set) compressed."""
    value = compress(compression, messages, level=compression_level, magic=magic)
    return encode_message(
        magic, offset, None, value, timestamp=timestamp, attributes=attributes | compression
    )
