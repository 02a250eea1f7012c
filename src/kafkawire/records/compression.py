"""The compression codecs of record batches and legacy wrapper messages, both directions.

- gzip: the standard library's ``zlib`` (gzip wrapper), streamed with ``max_length`` so output
  stops one byte past the limit; concatenated gzip members are read as one stream, as Java's
  ``GZIPInputStream`` does;
- snappy: xerial framing (see :mod:`.xerial`);
- lz4: the LZ4 frame format with independent blocks (KIP-57), through cramjam; magic 0 frames
  carry Kafka's broken header checksum (see :mod:`.lz4_frame`);
- zstd: zstd frames through cramjam.

Decompression is bounded by ``limit``: an output longer than that raises
:class:`DecompressionLimitError` and never allocates more than ``limit + 1`` bytes. cramjam
decompresses lz4 and zstd into a caller's buffer and fails when the buffer is too small, so
those codecs try a buffer sized from the input and grow it (4x at a time, up to ``limit + 1``)
while cramjam reports the buffer full.

Errors raised here carry no base offset; the batch decoders anchor them to their batch.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import cramjam

from .errors import CorruptRecordError, DecompressionLimitError, UnsupportedCodecError
from .lz4_frame import with_header_checksum
from .model import BytesLike, Compression
from .xerial import compress_snappy, decompress_snappy, snappy_bound

__all__ = ["DEFAULT_MAX_DECOMPRESSED_SIZE", "codec", "compress", "compressed_bound", "decompress"]

DEFAULT_MAX_DECOMPRESSED_SIZE = 64 * 1024 * 1024
"""The default bound on one batch's decompressed payload (64 MiB, past Kafka's default
``message.max.bytes`` of 1 MiB times any sane compression ratio)."""

_GZIP_WBITS = 31  # zlib's window bits for a gzip (not zlib or raw deflate) stream
_GZIP_DEFAULT_LEVEL = 6
_LZ4_DEFAULT_LEVEL = 1  # cramjam's fast (non-HC) LZ4 mode
_ZSTD_DEFAULT_LEVEL = 3
_FIRST_GUESS = 1 << 16
_GROWTH = 4
# What cramjam says when the output buffer is full (lz4, zstd); anything else is corruption.
_BUFFER_FULL = "failed to write whole buffer"

_IntoFunction = Callable[[BytesLike, bytearray], int]


def _gzip(data: BytesLike, level: int | None) -> bytes:
    compressor = zlib.compressobj(
        _GZIP_DEFAULT_LEVEL if level is None else level, zlib.DEFLATED, _GZIP_WBITS
    )
    return compressor.compress(data) + compressor.flush()


def _gunzip(data: BytesLike, limit: int) -> bytes:
    parts = []
    total = 0
    rest: BytesLike = data
    while True:
        stream = zlib.decompressobj(_GZIP_WBITS)
        try:
            part = stream.decompress(rest, limit + 1 - total)
        except zlib.error as exc:
            raise CorruptRecordError(f"corrupt gzip payload: {exc}") from None
        total += len(part)
        if total > limit:
            raise DecompressionLimitError(f"gzip payload inflates past {limit} bytes")
        if not stream.eof:
            raise CorruptRecordError("gzip payload is truncated")
        parts.append(part)
        rest = stream.unused_data
        if not rest:
            return b"".join(parts)


def _lz4(data: BytesLike, level: int | None, magic: int) -> bytes:
    compressor = cramjam.lz4.Compressor(
        level=_LZ4_DEFAULT_LEVEL if level is None else level,
        content_checksum=False,
        block_linked=False,
    )
    compressor.compress(data if isinstance(data, bytes) else bytes(data))
    frame = bytes(compressor.finish())
    return with_header_checksum(frame, broken=True) if magic == 0 else frame


def _into_bounded(into: _IntoFunction, name: str, data: BytesLike, limit: int) -> bytes:
    capacity = min(limit + 1, max(_FIRST_GUESS, _GROWTH * len(data)))
    while True:
        out = bytearray(capacity)
        try:
            written = into(data, out)
        except cramjam.DecompressionError as exc:
            if _BUFFER_FULL not in str(exc):
                raise CorruptRecordError(f"corrupt {name} payload: {exc}") from None
            if capacity > limit:
                raise DecompressionLimitError(
                    f"{name} payload inflates past {limit} bytes"
                ) from None
            capacity = min(limit + 1, capacity * _GROWTH)
            continue
        if written > limit:
            raise DecompressionLimitError(f"{name} payload inflates past {limit} bytes")
        return bytes(memoryview(out)[:written])


def _unlz4(data: BytesLike, limit: int, magic: int) -> bytes:
    if magic == 0:
        data = with_header_checksum(data, broken=False)
    return _into_bounded(cramjam.lz4.decompress_into, "lz4", data, limit)


def _zstd(data: BytesLike, level: int | None) -> bytes:
    return bytes(cramjam.zstd.compress(data, level=_ZSTD_DEFAULT_LEVEL if level is None else level))


def _unzstd(data: BytesLike, limit: int) -> bytes:
    return _into_bounded(cramjam.zstd.decompress_into, "zstd", data, limit)


def codec(value: int) -> Compression:
    """The :class:`Compression` with id ``value``; :class:`UnsupportedCodecError` if none."""
    try:
        return Compression(value)
    except ValueError:
        raise UnsupportedCodecError(f"codec id {value}") from None


def compress(
    codec: Compression, data: BytesLike, *, level: int | None = None, magic: int = 2
) -> bytes:
    """``data`` compressed with ``codec``, as a batch (``magic`` 2) or wrapper message carries it.

    ``level`` is the codec's compression level; ``None`` picks gzip 6, lz4's fast mode and
    zstd 3. Snappy has no levels and ignores it. ``magic`` matters only to lz4 (KAFKA-3160).
    ``Compression.NONE`` returns ``data`` as ``bytes``.
    """
    if codec is Compression.GZIP:
        return _gzip(data, level)
    if codec is Compression.SNAPPY:
        return compress_snappy(data)
    if codec is Compression.LZ4:
        return _lz4(data, level, magic)
    if codec is Compression.ZSTD:
        return _zstd(data, level)
    return bytes(data)


def decompress(
    codec: Compression,
    data: BytesLike,
    *,
    limit: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    magic: int = 2,
) -> bytes:
    """The payload ``data`` decompressed with ``codec``, at most ``limit`` bytes of it.

    Raises :class:`CorruptRecordError` for data the codec rejects and
    :class:`DecompressionLimitError` for output longer than ``limit``. ``Compression.NONE``
    returns ``data`` as ``bytes``: the decoders slice ``bytes`` faster than a ``memoryview``.
    """
    if codec is Compression.GZIP:
        return _gunzip(data, limit)
    if codec is Compression.SNAPPY:
        return decompress_snappy(data, limit)
    if codec is Compression.LZ4:
        return _unlz4(data, limit, magic)
    if codec is Compression.ZSTD:
        return _unzstd(data, limit)
    return bytes(data)


def compressed_bound(codec: Compression, size: int) -> int:
    """An upper bound on ``len(compress(codec, data))`` for any ``data`` of ``size`` bytes.

    From each format's worst case: deflate's stored blocks plus the gzip wrapper; snappy's
    ``32 + n + n/6`` per block; LZ4's uncompressed 64 KiB blocks with their size and checksum
    words; zstd's ``ZSTD_COMPRESSBOUND``.
    """
    if codec is Compression.GZIP:
        return size + (size >> 12) + (size >> 14) + (size >> 25) + 5 * (size // 16383 + 1) + 18
    if codec is Compression.SNAPPY:
        return snappy_bound(size)
    if codec is Compression.LZ4:
        return size + 8 * (size // 65536 + 1) + 23
    if codec is Compression.ZSTD:
        small = (128 * 1024 - size) >> 11 if size < 128 * 1024 else 0
        return size + (size >> 8) + small + 32
    return size
