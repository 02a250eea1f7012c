"""What the compressed batches of one records field may decompress to, all together.

Each payload is bounded on its own (``max_decompressed_size``, see :mod:`.compression`), but a
records field can hold any number of small batches: 16 zstd batches of ~2 KB, each inflating
to 60 MiB, took a client to 1 GB from a 32 KB field. :func:`~kafkawire.records.decode_batches`
therefore gives every batch it yields one shared :class:`DecompressionBudget`, and a batch whose
payload would pass what is left raises :class:`DecompressionLimitError`.

The default total (:func:`default_max_total_decompressed_size`) follows from what a consumer
asked for. A records field is one partition of a Fetch response: at most
``max.partition.fetch.bytes`` (1 MiB by default in Kafka's consumer, within ``fetch.max.bytes``,
50 MiB), or one batch past it, up to the topic's ``max.message.bytes``, so the consumer makes
progress. Real data compresses a few times to a few tens of times (logs and JSON with zstd), so:

- ``DEFAULT_DECOMPRESSION_RATIO`` (64) times the field's size: room for any real ratio, and a
  bound proportional to what the consumer chose to fetch;
- never less than the per-batch limit, so whatever one batch may inflate to, a field may too
  (a small field holding one legitimately large batch still reads);
- never more than ``DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE`` (1 GiB) unless the per-batch limit is
  higher: a consumer that fetches tens of MiB per partition sets the total it can afford.

With Kafka's defaults that is 64 MiB per partition (1 MiB x 64, and the per-batch limit), and
the issue's 32 KB field stops after its first 60 MiB batch.

Only compressed payloads spend the budget: an uncompressed batch takes no more memory than
its part of the field. The budget counts what was decompressed, whether or not the records are
still held, which bounds the work one field can cause as well as the memory; batches whose
records are never read spend nothing.
"""

from __future__ import annotations

from .compression import decompress
from .errors import DecompressionLimitError
from .model import BytesLike, Compression

__all__ = [
    "DEFAULT_DECOMPRESSION_RATIO",
    "DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE",
    "DecompressionBudget",
    "default_max_total_decompressed_size",
]

DEFAULT_DECOMPRESSION_RATIO = 64
"""By default, a records field may decompress to this many times its own size in total."""

DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE = 1024 * 1024 * 1024
"""The most the ratio gives a records field by default (1 GiB); see the module docstring."""


def default_max_total_decompressed_size(records_size: int, max_decompressed_size: int) -> int:
    """The default total for a records field of ``records_size`` bytes (see the module)."""
    by_ratio = min(DEFAULT_DECOMPRESSION_RATIO * records_size, DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE)
    return max(max_decompressed_size, by_ratio)


class DecompressionBudget:
    """The decompression the batches of one records field may still do, shared among them."""

    __slots__ = ("_per_batch", "_remaining", "_total")

    def __init__(self, *, per_batch: int, total: int) -> None:
        self._per_batch = per_batch
        self._total = total
        self._remaining = total

    def decompress(self, codec: Compression, payload: BytesLike, *, magic: int = 2) -> bytes:
        """``payload`` decompressed within both limits, its size taken from the budget.

        Raises :class:`DecompressionLimitError` naming the limit it passes: the per-batch one,
        or the total when less than the per-batch limit was left.
        """
        if codec is Compression.NONE:
            return decompress(codec, payload)
        limit = min(self._per_batch, self._remaining)
        try:
            out = decompress(codec, payload, limit=limit, magic=magic)
        except DecompressionLimitError:
            if limit == self._per_batch:
                raise
            raise DecompressionLimitError(
                f"the records field inflates past {self._total} bytes in total"
                " (max_total_decompressed_size)"
            ) from None
        self._remaining -= len(out)
        return out
