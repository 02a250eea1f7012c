"""One payload decompresses within its limit: the peak, and what a snappy length may claim.

Peaks are measured with tracemalloc (see ``helpers.peak_memory``).
"""

from __future__ import annotations

import struct

import cramjam
import pytest

from kafkawire.records import (
    Compression,
    CorruptRecordError,
    DecompressionLimitError,
    compress,
    decompress,
)
from kafkawire.records.xerial import XERIAL_MAGIC

from .helpers import SLACK, MiB, peak_memory

COMPRESSED = [c for c in Compression if c is not Compression.NONE]


# -- one payload: the peak stays within the limit --------------------------------------------


@pytest.mark.parametrize("which", COMPRESSED)
def test_a_bomb_peaks_within_the_limit(which: Compression) -> None:
    bomb = compress(which, bytes(16 * MiB))
    limit = 4 * MiB

    def inflate() -> None:
        with pytest.raises(DecompressionLimitError):
            decompress(which, bomb, limit=limit)

    assert peak_memory(inflate) < limit + SLACK


@pytest.mark.parametrize("which", COMPRESSED)
def test_output_at_the_limit_is_built_once(which: Compression) -> None:
    data = bytes(4 * MiB)
    packed = compress(which, data)
    out: list[bytes] = []
    peak = peak_memory(lambda: out.append(decompress(which, packed, limit=len(data))))
    assert peak < len(data) + SLACK
    assert type(out[0]) is bytes
    assert out[0] == data


# -- snappy: the stated length is checked against what the input can hold ---------------------


def test_raw_snappy_claiming_more_than_its_bytes_can_hold_allocates_nothing() -> None:
    claim = b"\x80\x80\x80\x20"  # the uncompressed length, a varint: 64 MiB
    payload = claim + b"\x00"

    def inflate() -> None:
        with pytest.raises(CorruptRecordError, match="states 67108864 bytes"):
            decompress(Compression.SNAPPY, payload)

    assert peak_memory(inflate) < SLACK


def test_xerial_blocks_claiming_more_than_they_can_hold_allocate_nothing() -> None:
    block = b"\x80\x80\x80\x01" + bytes(8)  # states 2 MiB in 12 bytes
    payload = XERIAL_MAGIC + struct.pack(">ii", 1, 1) + (struct.pack(">i", 12) + block) * 32
    assert len(payload) == 528  # 32 blocks: 64 MiB claimed, the default limit

    def inflate() -> None:
        with pytest.raises(CorruptRecordError, match="states 2097152 bytes"):
            decompress(Compression.SNAPPY, payload)

    assert peak_memory(inflate) < SLACK


def test_snappy_at_its_highest_ratio_passes_the_check() -> None:
    # Zeros compress to 3-byte copies of 64 bytes, the most a snappy element produces.
    data = bytes(MiB)
    block = bytes(cramjam.snappy.compress_raw(data))
    assert len(data) > 20 * len(block)
    assert decompress(Compression.SNAPPY, block) == data
