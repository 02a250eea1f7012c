"""The compression codecs of record batches and legacy wrapper messages, both directions.

- gzip: RFC 1952 through cramjam; concatenated gzip members are read as one stream, as Java's
  ``GZIPInputStream`` does (compression uses the standard library's ``zlib``);
- snappy: xerial framing (see :mod:`.xerial`);
- lz4: the LZ4 frame format with independent blocks (KIP-57), through cramjam; magic 0 frames
  carry Kafka's broken header checksum (see :mod:`.lz4_frame`);
- zstd: zstd frames through cramjam.

Decompression is bounded by ``limit``: an output longer than that raises
:class:`DecompressionLimitError`, and the memory it takes never passes ``limit + 1`` bytes (plus
the codec's small working state). Every codec writes into one ``bytes`` object, and copies its
output out only where buffer and copy fit in the limit together (see :mod:`.output`). cramjam
decompresses gzip, lz4 and zstd into a caller's buffer and fails when it is too small, so those
codecs try a buffer sized from the input, free it, and try again with one 4x as large (up to
``limit + 1``) while cramjam reports the buffer full: the output of a bomb is never held twice,
at the cost of decompressing again. gzip's first guess is the size its trailer states, capped
at what deflate can produce from the input (1032 bytes per byte), so an honest payload is
decompressed once.

Errors raised here carry no base offset; the batch decoders anchor them to their batch.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

import cramjam

from .errors import CorruptRecordError, DecompressionLimitError, UnsupportedCodecError
from .lz4_frame import with_header_checksum
from .model import BytesLike, Compression
from .output import filled
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
# Deflate's best case: a 258-byte match in two 1-bit codes. Bounds what gzip's trailer may claim.
_DEFLATE_MAX_RATIO = 1032
_GZIP_ISIZE = struct.Struct("<I")  # the last field of a gzip member: its size modulo 2**32
# What cramjam says when the output buffer is full (gzip, lz4, zstd); anything else is corruption.
_BUFFER_FULL = "failed to write whole buffer"

_IntoFunction = Callable[[BytesLike, memoryview], int]


def _gzip(data: BytesLike, level: int | None) -> bytes:
    compressor = zlib.compressobj(
        _GZIP_DEFAULT_LEVEL if level is None else level, zlib.DEFLATED, _GZIP_WBITS
    )
    return compressor.compress(data) + compressor.flush()


def _gunzip(data: BytesLike, limit: int) -> bytes:
    claimed = _GZIP_ISIZE.unpack_from(data, len(data) - 4)[0] if len(data) >= 4 else 0
    guess = min(claimed, _DEFLATE_MAX_RATIO * len(data))
    return _into_bounded(cramjam.gzip.decompress_into, "gzip", data, limit, guess)


def _lz4(data: BytesLike, level: int | None, magic: int) -> bytes:
    compressor = cramjam.lz4.Compressor(
        level=_LZ4_DEFAULT_LEVEL if level is None else level,
        content_checksum=False,
        block_linked=False,
    )
    compressor.compress(data if isinstance(data, bytes) else bytes(data))
    frame = bytes(compressor.finish())
    return with_header_checksum(frame, broken=True) if magic == 0 else frame


def _into_bounded(into: _IntoFunction, name: str, data: BytesLike, limit: int, guess: int) -> bytes:
    """``into(data, buffer)``'s output, trying buffers from ``guess`` bytes up to ``limit + 1``."""
    capacity = min(limit + 1, guess)
    while (out := _try_into(into, name, data, capacity, limit)) is None:
        if capacity > limit:
            raise DecompressionLimitError(f"{name} payload inflates past {limit} bytes")
        capacity = min(limit + 1, max(_FIRST_GUESS, capacity * _GROWTH))
    if len(out) > limit:
        raise DecompressionLimitError(f"{name} payload inflates past {limit} bytes")
    return out


def _try_into(
    into: _IntoFunction, name: str, data: BytesLike, capacity: int, limit: int
) -> bytes | None:
    """The output in a ``capacity``-byte buffer, or ``None`` if it does not fit.

    A function of its own so that the full buffer is gone before the caller allocates the next.
    """
    try:
        return filled(capacity, lambda buffer: into(data, buffer), limit=limit)
    except cramjam.DecompressionError as exc:
        if _BUFFER_FULL not in str(exc):
            raise CorruptRecordError(f"corrupt {name} payload: {exc}") from None
        return None


def _guess(data: BytesLike) -> int:
    """A first output buffer size for a format that states none: a few times the input."""
    return max(_FIRST_GUESS, _GROWTH * len(data))


def _unlz4(data: BytesLike, limit: int, magic: int) -> bytes:
    if magic == 0:
        data = with_header_checksum(data, broken=False)
    return _into_bounded(cramjam.lz4.decompress_into, "lz4", data, limit, _guess(data))


def _zstd(data: BytesLike, level: int | None) -> bytes:
    return bytes(cramjam.zstd.compress(data, level=_ZSTD_DEFAULT_LEVEL if level is None else level))


def _unzstd(data: BytesLike, limit: int) -> bytes:
    return _into_bounded(cramjam.zstd.decompress_into, "zstd", data, limit, _guess(data))


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
