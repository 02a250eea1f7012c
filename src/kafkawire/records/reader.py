"""``decode_batches``: the batches of a Fetch response's ``records``, whatever their format.

A partition's records are a concatenation of entries that all start the same way: ::

    offset int64 | length int32 | (4 bytes) | magic int8 | ...

(for v2 the 4 bytes are the partition leader epoch, for legacy messages the crc), so the
magic byte sits at byte 16 of every entry and one loop can walk a buffer that mixes legacy
message sets and v2 batches, as a Fetch response can after a message format upgrade.

The broker cuts the response at the fetch size, usually inside the last batch: an entry whose
length runs past the end of the buffer ends the iteration without an error, as in Kafka's
consumer. A length below the smallest entry cannot come from truncation and is an error, as is
a v2 length below the v2 header (checked before ``decode_batch`` unpacks that header; legacy
messages check their size against their magic themselves).

Decompression is lazy: a batch's payload is decompressed when its records are first read, and
the iteration keeps nothing of the batches it has yielded, so a consumer that handles them one
by one holds one decompressed batch at a time. The batches of one call share a
:class:`~.budget.DecompressionBudget`: one bound on all they decompress together.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from .batch_v2 import MIN_BATCH_LENGTH, decode_batch
from .budget import DecompressionBudget, default_max_total_decompressed_size
from .compression import DEFAULT_MAX_DECOMPRESSED_SIZE
from .errors import CorruptRecordError
from .legacy import MIN_MESSAGE_SIZE, decode_message
from .model import Batch

__all__ = ["decode_batches"]

_OFFSET_AND_LENGTH = struct.Struct(">qi")
_LOG_OVERHEAD = _OFFSET_AND_LENGTH.size
_MAGIC_AT = 16
_MIN_LENGTH = min(MIN_MESSAGE_SIZE.values())


def decode_batches(
    data: bytes | bytearray | memoryview,
    *,
    check_crcs: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    max_total_decompressed_size: int | None = None,
) -> Iterator[Batch]:
    """Yield the batches in ``data``, lazily and without copying it.

    ``data`` is typically a decoded FetchResponse partition's ``records`` (a ``memoryview``
    slice of the response frame); each batch keeps a ``memoryview`` slice of it until its
    records are decoded. A truncated last batch ends the iteration quietly.

    ``check_crcs`` verifies each batch's crc (crc32c for v2, crc32 for legacy messages) as it
    is yielded, like the Java consumer's ``check.crcs``. ``max_decompressed_size`` bounds the
    decompressed payload of each compressed batch, and ``max_total_decompressed_size`` what
    the compressed batches of ``data`` decompress to together; ``None`` picks
    :func:`~kafkawire.records.default_max_total_decompressed_size`: 64 times ``len(data)``
    capped at 1 GiB, and never less than ``max_decompressed_size`` (see
    :mod:`kafkawire.records.budget` for why).

    Raises :class:`ValueError` at once for a negative ``max_total_decompressed_size``; then,
    while iterating, :class:`~kafkawire.records.CorruptRecordError` (bad length, magic or
    crc) and :class:`~kafkawire.records.UnsupportedCodecError`, and, from a batch's
    ``records``, :class:`~kafkawire.records.DecompressionLimitError` naming the limit it
    passes; every one names the batch's base offset.
    """
    view = memoryview(data).cast("B")
    if max_total_decompressed_size is None:
        max_total_decompressed_size = default_max_total_decompressed_size(
            len(view), max_decompressed_size
        )
    elif max_total_decompressed_size < 0:
        raise ValueError(f"max_total_decompressed_size {max_total_decompressed_size} < 0")
    budget = DecompressionBudget(per_batch=max_decompressed_size, total=max_total_decompressed_size)
    return _walk(view, check_crcs, budget)


def _walk(view: memoryview, check_crcs: bool, budget: DecompressionBudget) -> Iterator[Batch]:
    end = len(view)
    pos = 0
    while pos + _LOG_OVERHEAD <= end:
        offset, length = _OFFSET_AND_LENGTH.unpack_from(view, pos)
        if length < _MIN_LENGTH:
            raise CorruptRecordError(f"batch length {length} at byte {pos}", offset)
        batch_end = pos + _LOG_OVERHEAD + length
        if batch_end > end:
            return
        magic = view[pos + _MAGIC_AT]
        if magic == 2:
            if length < MIN_BATCH_LENGTH:
                raise CorruptRecordError(f"batch length {length} is below the v2 header", offset)
            yield decode_batch(view, pos, batch_end, check_crc=check_crcs, budget=budget)
        elif magic in MIN_MESSAGE_SIZE:
            yield decode_message(view, pos, batch_end, check_crc=check_crcs, budget=budget)
        else:
            raise CorruptRecordError(f"unknown magic {magic}", offset)
        pos = batch_end
