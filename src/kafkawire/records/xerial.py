"""Snappy as Kafka's Java client writes it: the xerial-snappy block framing.

Kafka's Java client compresses snappy through xerial's ``SnappyOutputStream``, which does not
write one raw snappy block but a framed stream: ::

    82 'SNAPPY' 00 | version int32 (1) | compatible version int32 (1)     (16-byte header)
    then blocks:     length int32 | raw snappy block (of at most 32 KiB of input)

Readers (Java's ``SnappyInputStream`` included) accept a stream without that header as one raw
snappy block, which is what some other clients write. Raw snappy states its uncompressed
length up front, so decompression sizes its output exactly and checks the limit before
allocating anything. That length is only a claim, so it is checked against the most the block
can produce first: a snappy element yields at most 64 bytes from 3 (a copy with a 2-byte offset;
1-byte-offset copies yield 11 from 2, 4-byte-offset ones 64 from 5, literals less than they
take), so ``n`` bytes produce at most ``64 * n // 3``. Five bytes cannot make 64 MiB be
allocated, and the output written must then be exactly the length claimed.
"""

from __future__ import annotations

import struct

import cramjam

from .errors import CorruptRecordError, DecompressionLimitError
from .model import BytesLike
from .output import filled

__all__ = ["XERIAL_MAGIC", "compress_snappy", "decompress_snappy", "snappy_bound"]

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_HEADER = struct.Struct(">8sii")
_BLOCK_LENGTH = struct.Struct(">i")
_XERIAL_VERSION = 1
_XERIAL_COMPATIBLE_VERSION = 1
_BLOCK_SIZE = 32 * 1024


def compress_snappy(data: BytesLike) -> bytes:
    """``data`` as a xerial-framed snappy stream, in 32 KiB blocks like the Java client."""
    view = memoryview(data)
    parts = [_HEADER.pack(XERIAL_MAGIC, _XERIAL_VERSION, _XERIAL_COMPATIBLE_VERSION)]
    for start in range(0, len(view), _BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _BLOCK_SIZE]))
        parts.append(_BLOCK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def snappy_bound(size: int) -> int:
    """An upper bound on ``len(compress_snappy(data))`` for ``len(data) == size``.

    A raw snappy block of ``n`` bytes takes at most ``32 + n + n // 6`` bytes.
    """
    blocks = -(-size // _BLOCK_SIZE)
    return _HEADER.size + blocks * (_BLOCK_LENGTH.size + 32) + size + size // 6


def _raw_length(block: BytesLike) -> int:
    try:
        size = int(cramjam.snappy.decompress_raw_len(block))
    except cramjam.DecompressionError as exc:
        raise CorruptRecordError(f"snappy block has no valid length: {exc}") from None
    if size > len(block) * 64 // 3:  # the most its bytes can produce (see above)
        raise CorruptRecordError(f"snappy block of {len(block)} bytes states {size} bytes")
    return size


def _blocks(data: memoryview) -> list[memoryview]:
    """The raw snappy blocks of ``data``: the xerial blocks, or ``data`` itself."""
    if len(data) < _HEADER.size or bytes(data[:8]) != XERIAL_MAGIC:
        return [data]
    blocks = []
    pos = _HEADER.size
    end = len(data)
    while pos < end:
        if pos + _BLOCK_LENGTH.size > end:
            raise CorruptRecordError("xerial snappy block length runs past the end")
        (length,) = _BLOCK_LENGTH.unpack_from(data, pos)
        pos += _BLOCK_LENGTH.size
        if length < 0 or pos + length > end:
            raise CorruptRecordError(f"xerial snappy block of {length} bytes at byte {pos}")
        blocks.append(data[pos : pos + length])
        pos += length
    return blocks


def decompress_snappy(data: BytesLike, limit: int) -> bytes:
    """Decompress xerial-framed or raw snappy ``data`` into at most ``limit`` bytes."""
    blocks = _blocks(memoryview(data))
    sizes = []
    total = 0
    for block in blocks:
        size = _raw_length(block)
        total += size
        if total > limit:
            raise DecompressionLimitError(f"snappy payload inflates past {limit} bytes")
        sizes.append(size)

    def fill(out: memoryview) -> int:
        pos = 0
        for block, size in zip(blocks, sizes, strict=True):
            try:
                written = cramjam.snappy.decompress_raw_into(block, out[pos : pos + size])
            except cramjam.DecompressionError as exc:
                raise CorruptRecordError(f"corrupt snappy block: {exc}") from None
            if written != size:
                raise CorruptRecordError(f"snappy block wrote {written} bytes, not {size}")
            pos += size
        return pos

    return filled(total, fill, limit=limit)
