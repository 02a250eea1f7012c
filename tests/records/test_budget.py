"""The batches of one records field share a decompression budget, and inflate only when read.

Peaks are measured with tracemalloc (see ``helpers.peak_memory``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from kafkawire.records import (
    DEFAULT_DECOMPRESSION_RATIO,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE,
    Compression,
    DecompressionLimitError,
    LegacyBatchBuilder,
    RecordBatchBuilder,
    decode_batches,
    default_max_total_decompressed_size,
)

from .helpers import SLACK, MiB, peak_memory


@contextlib.contextmanager
def _raises_limit(base_offset: int, limit: int) -> Iterator[None]:
    with pytest.raises(DecompressionLimitError, match=f"past {limit} bytes") as caught:
        yield
    assert caught.value.base_offset == base_offset


def _batches(count: int, value: bytes, codec: Compression = Compression.ZSTD) -> bytes:
    """``count`` batches (base offsets 0, 1, ...) of one record each, holding ``value``."""
    parts = []
    for offset in range(count):
        builder = RecordBatchBuilder(compression=codec, base_offset=offset)
        builder.append(None, value, timestamp=0)
        parts.append(builder.build())
    return b"".join(parts)


def _values(data: bytes, **limits: int) -> list[int]:
    """The length of every record value in ``data``, read batch by batch as a consumer does."""
    return [len(r.value or b"") for batch in decode_batches(data, **limits) for r in batch.records]


# -- one records field: the batches share a budget -------------------------------------------


def test_the_default_total_is_64_times_the_field_within_bounds() -> None:
    per_batch = DEFAULT_MAX_DECOMPRESSED_SIZE
    assert DEFAULT_DECOMPRESSION_RATIO == 64
    assert default_max_total_decompressed_size(32 * 1024, per_batch) == per_batch
    assert default_max_total_decompressed_size(4 * MiB, per_batch) == 256 * MiB
    assert default_max_total_decompressed_size(50 * MiB, per_batch) == (
        DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE
    )
    assert default_max_total_decompressed_size(50 * MiB, 2048 * MiB) == 2048 * MiB


def test_the_batches_of_a_records_field_share_one_decompression_budget() -> None:
    data = _batches(16, bytes(MiB))  # a few KB, inflating to 16 MiB
    assert len(data) < 16 * 1024
    budget = 4 * MiB
    read: list[int] = []
    with _raises_limit(base_offset=3, limit=budget):
        for batch in decode_batches(data, max_total_decompressed_size=budget):
            read.append(len(batch.records))
    assert read == [1, 1, 1]  # a batch inflates to a little more than 1 MiB: 3 fit in 4 MiB


def test_by_default_a_small_records_field_inflates_to_one_batch_limit_in_total() -> None:
    # The bomb, scaled down: each batch within the per-batch limit, the sum past it.
    data = _batches(16, bytes(600 * 1024))
    with _raises_limit(base_offset=1, limit=MiB):
        _values(data, max_decompressed_size=MiB)


def test_by_default_the_budget_grows_with_the_size_of_the_records_field() -> None:
    # Incompressible values: 1.5 MiB of output from ~1.5 MiB of input passes a 1 MiB
    # per-batch limit in total, as the default allows 64 times the input.
    data = _batches(24, os.urandom(64 * 1024), Compression.LZ4)
    assert _values(data, max_decompressed_size=MiB) == [64 * 1024] * 24


def test_the_budget_also_covers_legacy_wrappers() -> None:
    parts = []
    for offset in range(4):
        builder = LegacyBatchBuilder(1, compression=Compression.GZIP, base_offset=offset)
        builder.append(None, bytes(MiB), timestamp=0)
        parts.append(builder.build())
    with _raises_limit(base_offset=2, limit=2 * MiB + 100):
        _values(b"".join(parts), max_total_decompressed_size=2 * MiB + 100)


def test_uncompressed_batches_spend_no_budget() -> None:
    data = _batches(4, bytes(1000), Compression.NONE)
    assert _values(data, max_total_decompressed_size=0) == [1000] * 4


def test_a_budget_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="max_total_decompressed_size"):
        decode_batches(b"", max_total_decompressed_size=-1)


# -- laziness: batches inflate when read, one at a time ---------------------------------------


def test_skipped_batches_are_not_decompressed_and_spend_no_budget() -> None:
    data = _batches(8, bytes(2 * MiB))
    assert peak_memory(lambda: list(decode_batches(data))) < SLACK
    batches = list(decode_batches(data, max_total_decompressed_size=5 * MiB))
    assert [len(b.records[0].value or b"") for b in batches[6:]] == [2 * MiB] * 2


def test_a_consumer_reading_batch_by_batch_holds_one_batch_at_a_time() -> None:
    data = _batches(8, bytes(2 * MiB))

    def consume() -> None:
        for batch in decode_batches(data):
            assert len(batch.records[0].value or b"") == 2 * MiB

    # One batch at a time (a 4 MiB output buffer and the 2 MiB copied out of it, then that
    # payload and its record's value), not all eight values (16 MiB).
    assert peak_memory(consume) < 8 * MiB + SLACK
