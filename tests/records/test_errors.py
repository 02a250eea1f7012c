"""Bad input raises a typed error naming the batch, and nothing else escapes.

A truncated last batch (the broker cuts at the fetch size) is not an error: iteration stops.
"""

from __future__ import annotations

import contextlib
import gzip
import struct
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.records import (
    Compression,
    CorruptRecordError,
    DecompressionLimitError,
    LegacyBatchBuilder,
    Record,
    RecordBatchBuilder,
    RecordsError,
    UnsupportedCodecError,
    compress,
    decode_batches,
)

from .helpers import THOROUGH, legacy_message, v2_batch


def _records(
    data: bytes | memoryview, *, check_crcs: bool = True, limit: int = 64 * 1024 * 1024
) -> list[Record]:
    """Decode every batch and every record, as a consumer would."""
    batches = decode_batches(data, check_crcs=check_crcs, max_decompressed_size=limit)
    return [r for b in batches for r in b.records]


def _sample() -> tuple[bytes, list[int]]:
    """A buffer mixing formats and codecs, and the byte offsets where its batches end."""
    v2 = RecordBatchBuilder(base_offset=100)
    v2.append(b"k", b"value", timestamp=10, headers=[("h", b"x"), ("n", None)])
    v2.append(None, None, timestamp=11)
    v2_lz4 = RecordBatchBuilder(compression=Compression.LZ4, base_offset=200)
    v2_lz4.append(b"a", b"b" * 50, timestamp=20)
    plain = LegacyBatchBuilder(1, base_offset=300)
    plain.append(b"k", b"v", timestamp=30)
    wrapped = LegacyBatchBuilder(0, compression=Compression.GZIP, base_offset=400)
    wrapped.append(b"k", b"v", timestamp=0)
    wrapped.append(None, b"w", timestamp=0)
    parts = [v2.build(), plain.build(), wrapped.build(), v2_lz4.build()]
    ends: list[int] = []
    for part in parts:
        ends.append((ends[-1] if ends else 0) + len(part))
    return b"".join(parts), ends


SAMPLE, SAMPLE_ENDS = _sample()


def test_truncation_at_every_byte_stops_cleanly_after_the_whole_batches() -> None:
    whole = list(decode_batches(SAMPLE))
    for cut in range(len(SAMPLE) + 1):
        complete = sum(1 for end in SAMPLE_ENDS if end <= cut)
        batches = list(decode_batches(memoryview(SAMPLE)[:cut]))
        assert batches == whole[:complete], cut


def test_a_length_past_the_end_is_truncation_however_large() -> None:
    huge = SAMPLE[:8] + struct.pack(">i", 2**31 - 1) + SAMPLE[12:]
    assert list(decode_batches(huge)) == []


@pytest.mark.parametrize("length", [-1, -(2**31), 0, 13])
def test_a_length_below_the_smallest_message_is_an_error(length: int) -> None:
    data = SAMPLE[:8] + struct.pack(">i", length) + SAMPLE[12:]
    with pytest.raises(CorruptRecordError, match=f"batch at offset 100: batch length {length}"):
        list(decode_batches(data))


def test_a_v2_length_below_its_header_is_an_error() -> None:
    data = SAMPLE[:8] + struct.pack(">i", 40) + SAMPLE[12:]
    with pytest.raises(CorruptRecordError, match="below the v2 header") as caught:
        list(decode_batches(data))
    assert caught.value.base_offset == 100


@pytest.mark.parametrize("length", [14, 48])
def test_a_short_v2_entry_at_the_end_of_the_buffer_is_a_typed_error(length: int) -> None:
    # Whole by its length, yet shorter than the 61-byte header: nothing past it to read.
    data = struct.pack(">qiib", 5, length, -1, 2) + bytes(length - 5)
    with pytest.raises(CorruptRecordError, match=f"batch length {length} is below the v2 header"):
        list(decode_batches(data))


@pytest.mark.parametrize("magic", [3, 0x7F, 0xFF])
def test_an_unknown_magic_is_an_error(magic: int) -> None:
    data = SAMPLE[:16] + bytes((magic,)) + SAMPLE[17:]
    with pytest.raises(CorruptRecordError, match=f"batch at offset 100: unknown magic {magic}"):
        list(decode_batches(data))


@pytest.mark.parametrize("end", range(len(SAMPLE_ENDS)))
def test_a_flipped_byte_fails_the_crc(end: int) -> None:
    at = SAMPLE_ENDS[end] - 1  # the last byte of each batch: inside every crc's range
    data = SAMPLE[:at] + bytes((SAMPLE[at] ^ 1,)) + SAMPLE[at + 1 :]
    with pytest.raises(CorruptRecordError, match="crc") as caught:
        _records(data)
    assert caught.value.base_offset == [100, 300, 401, 200][end]


def test_check_crcs_false_skips_the_crc() -> None:
    at = SAMPLE.index(b"value")  # the v2 batch's first record's value
    data = SAMPLE[:at] + b"X" + SAMPLE[at + 1 :]
    with pytest.raises(CorruptRecordError):
        _records(data)
    assert _records(data, check_crcs=False)[0].value == b"Xalue"


def test_the_partition_leader_epoch_is_outside_the_crc() -> None:
    data = SAMPLE[:12] + struct.pack(">i", 77) + SAMPLE[16:]
    assert next(iter(decode_batches(data))).partition_leader_epoch == 77  # type: ignore[union-attr]


# -- v2 records -----------------------------------------------------------------------------


def _record(body: bytes) -> bytes:
    """A record with a correct length prefix (bodies here are under 64 bytes)."""
    return bytes((len(body) << 1,)) + body


_GOOD = _record(b"\x00\x00\x00\x01\x02v\x00")  # attrs, ts 0, offset 0, null key, "v", 0 headers


@pytest.mark.parametrize(
    ("records", "count", "reason"),
    [
        (b"\xff" * 6 + bytes(10), 1, "longer than 32 bits"),  # a 6-byte record length
        (b"\xff\xff\xff\xff\x7f" + bytes(10), 1, "overflows 32 bits"),
        (b"\x03" + bytes(10), 1, "record length -2"),
        (_record(b"\x00\x00\x00\x03\x02v\x00"), 1, "key length -2"),
        (_record(b"\x00\x00\x00\x01\x05\x00"), 1, "value length -3"),
        (_record(b"\x00\x00\x00\x01\x01\x01"), 1, "header count -1"),
        (_record(b"\x00\x00\x00\x01\x01\x7e" + bytes(6)), 1, "header count 63"),
        (_record(b"\x00\x00\x00\x01\x01\x02\x01\x00"), 1, "header key length -1"),
        (_record(b"\x00\x00\x00\x01\x01\x02\x02h\x03"), 1, "header value length -2"),
        (_record(b"\x00\x00\x00\x01\x01\x02\x02\xff\x01"), 1, "not UTF-8"),
        (_record(b"\x00" + b"\xff" * 10 + b"\x01\x00\x01\x01\x00"), 1, "longer than 64 bits"),
        (bytes((16,)) + _GOOD[1:] + b"\x00", 1, "used"),  # length 8, fields 7
        (bytes((12,)) + _GOOD[1:], 1, "used"),  # length 6, fields 7
        (_GOOD + b"\x00", 1, "1 records end at byte 8 of 9"),
        (_GOOD, 2, "2 records cannot fit in 8 bytes"),
        (_GOOD + b"\x20" + bytes(6), 2, "ending at byte 25"),  # length 16, 7 bytes left
        (_GOOD[:-1], 1, "past the end"),
    ],
)
def test_malformed_records_are_errors_naming_the_batch(
    records: bytes, count: int, reason: str
) -> None:
    batch = v2_batch(records, count=count, base_offset=55)
    with pytest.raises(CorruptRecordError, match=reason) as caught:
        _records(batch)
    assert caught.value.base_offset == 55
    assert str(caught.value).startswith("batch at offset 55: ")


def test_a_well_formed_hand_made_record_decodes() -> None:
    assert _records(v2_batch(_GOOD, count=1, base_offset=55, base_timestamp=9)) == [
        Record(55, 9, None, b"v")
    ]


def test_every_truncation_of_a_records_section_is_an_error() -> None:
    builder = RecordBatchBuilder()
    builder.append(b"key", b"value" * 30, timestamp=5, headers=[("a", b"b"), ("c", None)])
    builder.append(None, b"x" * 200, timestamp=10_000_000)
    records = builder.build()[61:]
    for cut in range(len(records)):
        with pytest.raises(CorruptRecordError):
            _records(v2_batch(records[:cut], count=2))


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_an_unknown_v2_codec_is_an_error(codec_id: int) -> None:
    with pytest.raises(UnsupportedCodecError, match=f"batch at offset 8: codec id {codec_id}"):
        list(decode_batches(v2_batch(_GOOD, count=1, base_offset=8, attributes=codec_id)))


@pytest.mark.parametrize("which", [c for c in Compression if c is not Compression.NONE])
def test_corrupt_compressed_records_are_errors_naming_the_batch(which: Compression) -> None:
    batch = v2_batch(
        b"definitely not " + which.name.encode(), count=1, base_offset=9, attributes=which
    )
    with pytest.raises(CorruptRecordError) as caught:
        _records(batch)
    assert caught.value.base_offset == 9


@pytest.mark.parametrize("which", [c for c in Compression if c is not Compression.NONE])
def test_a_decompression_bomb_is_an_error_naming_the_batch(which: Compression) -> None:
    payload = compress(which, bytes(8 * 1024 * 1024))
    bomb = v2_batch(payload, count=1, base_offset=3, attributes=which)
    with pytest.raises(DecompressionLimitError) as caught:
        _records(bomb, limit=1024 * 1024)
    assert caught.value.base_offset == 3


# -- legacy messages ------------------------------------------------------------------------


def _wrapper(
    magic: int, offset: int, inner: bytes, *, codec: Compression = Compression.GZIP
) -> bytes:
    return legacy_message(
        magic, offset, None, compress(codec, inner, magic=magic), attributes=codec
    )


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (_wrapper(1, 7, legacy_message(1, 0, None, b"v", attributes=1)), "compressed again"),
        (_wrapper(1, 7, legacy_message(0, 0, None, b"v")), "inner message magic 0 != 1"),
        (legacy_message(1, 7, None, None, attributes=Compression.GZIP), "null value"),
        (_wrapper(0, 7, b""), "holds no messages"),
        (_wrapper(0, 7, legacy_message(0, 0, None, b"v")[:-1]), "size 15"),
        (_wrapper(0, 7, legacy_message(0, 0, None, b"v") + b"\x00" * 5), "truncated"),
        (_wrapper(0, 7, struct.pack(">qi", 0, 3) + b"abc"), "size 3"),
        (_wrapper(1, 7, legacy_message(1, 0, None, b"v")[:-1] + b"w"), "crc32"),
    ],
)
def test_malformed_wrappers_are_errors_naming_the_wrapper(data: bytes, reason: str) -> None:
    with pytest.raises(CorruptRecordError, match=reason) as caught:
        _records(data)
    assert caught.value.base_offset == 7


def _resized(message: bytes, body: bytes) -> bytes:
    """``message``'s offset with ``body`` (magic onwards), a consistent size and crc32."""
    return message[:8] + struct.pack(">iI", 4 + len(body), zlib.crc32(body)) + body


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"\x00\x00" + struct.pack(">i", 50) + b"key" + struct.pack(">i", 1) + b"v", "length 50"),
        (b"\x00\x00" + struct.pack(">i", -2) + struct.pack(">i", 1) + b"v", "length -2"),
        (b"\x00\x00" + struct.pack(">ii", -1, 1) + b"v" + b"extra", "bytes after its value"),
        (b"\x00\x00" + struct.pack(">i", 3) + b"key\x00", "runs past the end"),
        (b"\x01\x00" + bytes(8) + struct.pack(">i", -1) + b"\x00", "below its header"),
    ],
)
def test_malformed_legacy_messages_are_errors_naming_the_message(body: bytes, reason: str) -> None:
    data = _resized(legacy_message(0, 21, None, b"v"), body)
    with pytest.raises(CorruptRecordError, match=reason) as caught:
        _records(data)
    assert caught.value.base_offset == 21


def test_an_unknown_legacy_codec_is_an_error() -> None:
    with pytest.raises(UnsupportedCodecError, match="batch at offset 4: codec id 5"):
        _records(legacy_message(1, 4, None, b"v", attributes=5))


def test_a_legacy_bomb_is_an_error_naming_the_wrapper() -> None:
    inner = legacy_message(1, 0, None, bytes(4 * 1024 * 1024))
    bomb = legacy_message(1, 12, None, gzip.compress(inner), attributes=Compression.GZIP)
    with pytest.raises(DecompressionLimitError) as caught:
        _records(bomb, limit=1024 * 1024)
    assert caught.value.base_offset == 12


# -- fuzz -----------------------------------------------------------------------------------


@THOROUGH
@given(data=st.binary(max_size=400))
def test_arbitrary_bytes_raise_only_typed_errors(data: bytes) -> None:
    with contextlib.suppress(RecordsError):
        _records(data)


@THOROUGH
@given(data=st.data())
def test_mutated_batches_raise_only_typed_errors(data: st.DataObject) -> None:
    buffer = bytearray(SAMPLE)
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(buffer) - 1))
        buffer[at] = data.draw(st.integers(0, 255))
    with contextlib.suppress(RecordsError):
        _records(bytes(buffer), check_crcs=False)
