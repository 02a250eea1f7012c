"""The codecs on their own: framing details, KAFKA-3160, bounds, limits and corrupt input."""

from __future__ import annotations

import gzip
import importlib.util
import os
import struct

import cramjam
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.records import (
    Compression,
    CorruptRecordError,
    DecompressionLimitError,
    UnsupportedCodecError,
    compress,
    compressed_bound,
    decompress,
)
from kafkawire.records.compression import codec
from kafkawire.records.lz4_frame import FRAME_MAGIC, with_header_checksum, xxh32
from kafkawire.records.xerial import XERIAL_MAGIC

from .helpers import SETTINGS, THOROUGH

CODECS = list(Compression)
COMPRESSED = [c for c in Compression if c is not Compression.NONE]


@THOROUGH
@given(
    data=st.binary(max_size=5000) | st.binary(max_size=50).map(lambda b: b * 200),
    which=st.sampled_from(CODECS),
    magic=st.sampled_from([0, 1, 2]),
    level=st.sampled_from([None, 0, 1, 9]),
)
def test_every_codec_round_trips_within_its_bound(
    data: bytes, which: Compression, magic: int, level: int | None
) -> None:
    packed = compress(which, data, magic=magic, level=level)
    assert len(packed) <= compressed_bound(which, len(data))
    assert decompress(which, packed, magic=magic) == data
    assert decompress(which, memoryview(packed), magic=magic) == data


def test_unknown_codec_ids_are_typed_errors() -> None:
    assert codec(3) is Compression.LZ4
    with pytest.raises(UnsupportedCodecError, match="codec id 6"):
        codec(6)


# -- snappy: xerial framing ---------------------------------------------------------------


def test_snappy_writes_xerial_frames_of_32_kib_blocks() -> None:
    data = os.urandom(70_000)
    packed = compress(Compression.SNAPPY, data)
    assert packed[:16] == XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    pos, sizes = 16, []
    while pos < len(packed):
        (length,) = struct.unpack_from(">i", packed, pos)
        sizes.append(len(cramjam.snappy.decompress_raw(packed[pos + 4 : pos + 4 + length])))
        pos += 4 + length
    assert sizes == [32768, 32768, 70_000 - 65536]


def test_snappy_reads_raw_blocks_and_empty_xerial_streams() -> None:
    data = b"raw snappy, as some clients write it" * 10
    assert decompress(Compression.SNAPPY, bytes(cramjam.snappy.compress_raw(data))) == data
    assert decompress(Compression.SNAPPY, compress(Compression.SNAPPY, b"")) == b""


@pytest.mark.parametrize(
    "payload",
    [
        XERIAL_MAGIC + struct.pack(">ii", 1, 1) + b"\x00\x00",  # a block length cut short
        XERIAL_MAGIC + struct.pack(">iii", 1, 1, 50) + b"abc",  # a block past the end
        XERIAL_MAGIC + struct.pack(">iii", 1, 1, -3),  # a negative block length
        XERIAL_MAGIC + struct.pack(">iii", 1, 1, 3) + b"\xff\xff\xff",  # no valid length
        b"\x0a\x00abc",  # raw block: claims 10 bytes, holds garbage
    ],
)
def test_corrupt_snappy_is_a_typed_error(payload: bytes) -> None:
    with pytest.raises(CorruptRecordError):
        decompress(Compression.SNAPPY, payload)


# -- lz4: frames and KAFKA-3160 -----------------------------------------------------------


def test_xxh32_matches_reference_vectors() -> None:
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"a") == 0x550D7456
    assert xxh32(b"abc") == 0x32D153FF
    assert xxh32(b"", seed=1) != xxh32(b"")


@pytest.mark.skipif(importlib.util.find_spec("xxhash") is None, reason="needs xxhash")
@SETTINGS
@given(data=st.binary(max_size=100), seed=st.integers(0, 2**32 - 1))
def test_xxh32_matches_the_xxhash_package(data: bytes, seed: int) -> None:
    import xxhash

    assert xxh32(data, seed) == xxhash.xxh32(data, seed=seed).intdigest()


def test_lz4_frames_have_independent_blocks_and_no_content_checksum() -> None:
    frame = compress(Compression.LZ4, b"x" * 1000)
    assert frame[:4] == FRAME_MAGIC
    flags = frame[4]
    assert flags & 0x20  # block independence (KIP-57)
    assert not flags & 0x04  # no content checksum
    assert frame[6] == (xxh32(frame[4:6]) >> 8) & 0xFF


def test_magic_0_lz4_carries_kafkas_broken_header_checksum() -> None:
    frame = compress(Compression.LZ4, b"x" * 1000, magic=0)
    assert frame[6] == (xxh32(frame[:6]) >> 8) & 0xFF  # hashed with the magic number
    assert frame[6] != (xxh32(frame[4:6]) >> 8) & 0xFF
    with pytest.raises(CorruptRecordError):  # a strict reader rejects it ...
        decompress(Compression.LZ4, frame, magic=1)
    assert decompress(Compression.LZ4, frame, magic=0) == b"x" * 1000  # ... magic 0 reads it


def test_magic_0_reads_lz4_frames_with_a_correct_header_checksum_too() -> None:
    frame = compress(Compression.LZ4, b"y" * 100, magic=1)
    assert decompress(Compression.LZ4, frame, magic=0) == b"y" * 100


def test_header_checksum_fixup_covers_content_size_and_dict_id() -> None:
    frame = bytearray(FRAME_MAGIC + bytes((0x60 | 0x08 | 0x01, 0x40)) + bytes(12) + b"\x00")
    fixed = with_header_checksum(frame, broken=False)
    assert fixed[18] == (xxh32(bytes(frame[4:18])) >> 8) & 0xFF


@pytest.mark.parametrize(
    "frame", [b"", b"\x04\x22\x4d", b"not an lz4 frame", FRAME_MAGIC + b"\x68\x40"]
)
def test_lz4_header_fixup_rejects_what_is_no_frame_header(frame: bytes) -> None:
    with pytest.raises(CorruptRecordError):
        decompress(Compression.LZ4, frame, magic=0)


# -- bounds and bombs ---------------------------------------------------------------------


@pytest.mark.parametrize("which", COMPRESSED)
def test_output_at_the_limit_passes_and_one_byte_more_fails(which: Compression) -> None:
    data = bytes(100_000)
    packed = compress(which, data)
    assert decompress(which, packed, limit=len(data)) == data
    with pytest.raises(DecompressionLimitError, match="past 99999 bytes"):
        decompress(which, packed, limit=len(data) - 1)


@pytest.mark.parametrize("which", COMPRESSED)
def test_a_bomb_stops_at_the_limit(which: Compression) -> None:
    bomb = compress(which, bytes(20 * 1024 * 1024))  # 20 MiB of zeros
    assert len(bomb) < 1024 * 1024
    with pytest.raises(DecompressionLimitError):
        decompress(which, bomb, limit=4 * 1024 * 1024)


@pytest.mark.parametrize("which", COMPRESSED)
def test_high_ratios_grow_the_output_buffer(which: Compression) -> None:
    data = bytes(3 * 1024 * 1024)  # compresses > 1000x: past the first guesses
    assert decompress(which, compress(which, data)) == data


def test_concatenated_gzip_members_read_as_one_stream() -> None:
    assert decompress(Compression.GZIP, gzip.compress(b"ab") + gzip.compress(b"cd")) == b"abcd"


@pytest.mark.parametrize("which", COMPRESSED)
@pytest.mark.parametrize("cut", ["garbage", "truncated", "empty", "flipped"])
def test_corrupt_payloads_are_typed_errors(which: Compression, cut: str) -> None:
    packed = compress(which, os.urandom(3000) + bytes(3000))
    payload = {
        "garbage": b"this is not compressed data at all" * 3,
        "truncated": packed[: len(packed) // 2],
        "empty": b"",
        "flipped": packed[:10] + bytes(b ^ 0x5A for b in packed[10:]),
    }[cut]
    with pytest.raises(CorruptRecordError):
        decompress(which, payload)
