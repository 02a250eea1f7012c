"""Byte-exact batches laid out by hand from Kafka's protocol documentation ("Messages").

Each crc is computed here, independently of the code under test: zlib's crc32 over magic..end
for legacy messages, crc32c over attributes..end for v2 batches.
"""

from __future__ import annotations

import gzip
import struct
import zlib

import pytest
from crc32c import crc32c

from kafkawire.records import (
    NO_TIMESTAMP,
    Compression,
    ControlType,
    EndTransactionMarker,
    Header,
    LegacyBatchBuilder,
    Record,
    RecordBatchBuilder,
    decode_batches,
    decode_end_transaction_marker,
    end_transaction_batch,
)

pytestmark = pytest.mark.golden


def _with_crc32(message: bytes) -> bytes:
    """Fill the crc of a legacy message whose crc field (bytes 12-15) is zero."""
    return message[:12] + struct.pack(">I", zlib.crc32(message[16:])) + message[16:]


def _with_crc32c(batch: bytes) -> bytes:
    """Fill the crc of a v2 batch whose crc field (bytes 17-20) is zero."""
    return batch[:17] + struct.pack(">I", crc32c(batch[21:])) + batch[21:]


MAGIC_0 = _with_crc32(
    bytes.fromhex("0000000000000005")  # offset 5
    + bytes.fromhex("00000016")  # message size 22: crc .. end of value
    + bytes.fromhex("00000000")  # crc (filled in)
    + bytes.fromhex("00")  # magic 0
    + bytes.fromhex("00")  # attributes: no codec
    + bytes.fromhex("00000003")
    + b"key"  # key length, key
    + bytes.fromhex("00000005")
    + b"value"  # value length, value
)

MAGIC_1 = _with_crc32(
    bytes.fromhex("0000000000000005")  # offset 5
    + bytes.fromhex("0000001b")  # message size 27: crc .. end of value
    + bytes.fromhex("00000000")  # crc (filled in)
    + bytes.fromhex("01")  # magic 1
    + bytes.fromhex("00")  # attributes: no codec, create time
    + bytes.fromhex("00000000000003e8")  # timestamp 1000
    + bytes.fromhex("ffffffff")  # key length -1: null key
    + bytes.fromhex("00000005")
    + b"value"  # value length, value
)

MAGIC_2 = _with_crc32c(
    bytes.fromhex("0000000000000000")  # baseOffset 0
    + bytes.fromhex("00000048")  # batchLength 72: 49 of header after it + 23 of records
    + bytes.fromhex("ffffffff")  # partitionLeaderEpoch -1
    + bytes.fromhex("02")  # magic 2
    + bytes.fromhex("00000000")  # crc (filled in)
    + bytes.fromhex("0000")  # attributes: no codec, create time, not transactional
    + bytes.fromhex("00000001")  # lastOffsetDelta 1
    + bytes.fromhex("00000000000003e8")  # baseTimestamp 1000
    + bytes.fromhex("00000000000003ed")  # maxTimestamp 1005
    + bytes.fromhex("ffffffffffffffff")  # producerId -1
    + bytes.fromhex("ffff")  # producerEpoch -1
    + bytes.fromhex("ffffffff")  # baseSequence -1
    + bytes.fromhex("00000002")  # records count 2
    # record 0: length 13 (zigzag 26), attributes 0, timestamp delta 0, offset delta 0,
    # key "k" (length 1 -> 02), value "v1" (length 2 -> 04), one header "h" = "x"
    + bytes.fromhex("1a" "00" "00" "00" "02") + b"k" + bytes.fromhex("04") + b"v1"
    + bytes.fromhex("02" "02") + b"h" + bytes.fromhex("02") + b"x"
    # record 1: length 8 (zigzag 16), attributes 0, timestamp delta 5 (0a), offset delta 1
    # (02), null key (-1 -> 01), value "v2", no headers
    + bytes.fromhex("10" "00" "0a" "02" "01" "04") + b"v2" + bytes.fromhex("00")
)  # fmt: skip


def test_magic_0_message_is_byte_exact() -> None:
    builder = LegacyBatchBuilder(0, base_offset=5)
    builder.append(b"key", b"value", timestamp=1234)  # magic 0 has no timestamp
    assert builder.build() == MAGIC_0
    [batch] = decode_batches(MAGIC_0)
    assert list(batch.records) == [Record(5, NO_TIMESTAMP, b"key", b"value")]


def test_magic_1_message_is_byte_exact() -> None:
    builder = LegacyBatchBuilder(1, base_offset=5)
    builder.append(None, b"value", timestamp=1000)
    assert builder.build() == MAGIC_1
    [batch] = decode_batches(MAGIC_1)
    assert list(batch.records) == [Record(5, 1000, None, b"value")]


def test_v2_batch_is_byte_exact() -> None:
    builder = RecordBatchBuilder()
    builder.append(b"k", b"v1", timestamp=1000, headers=[("h", b"x")])
    builder.append(None, b"v2", timestamp=1005)
    assert builder.build() == MAGIC_2
    [batch] = decode_batches(MAGIC_2)
    assert list(batch.records) == [
        Record(0, 1000, b"k", b"v1", (Header("h", b"x"),)),
        Record(1, 1005, None, b"v2"),
    ]


def test_a_buffer_mixing_formats_decodes_in_order() -> None:
    mixed = MAGIC_0 + MAGIC_1 + MAGIC_2
    assert [b.magic for b in decode_batches(mixed)] == [0, 1, 2]


def _wrapper(magic: int, offset: int, codec: int, inner: bytes) -> bytes:
    """A compressed wrapper message (null key) around ``inner``, compressed already."""
    timestamp = bytes.fromhex("00000000000007d0") if magic else b""  # 2000
    body = bytes((magic, codec)) + timestamp + bytes.fromhex("ffffffff")
    body += struct.pack(">i", len(inner)) + inner
    return _with_crc32(struct.pack(">qi", offset, 4 + len(body)) + bytes(4) + body)


@pytest.mark.parametrize(
    ("wrapper_offset", "offsets"),
    [
        # Broker-style: the wrapper holds the absolute offset of the last inner message.
        (11, [10, 11]),
        # Producer-built: the wrapper is left at 0 for the broker to assign, which would put
        # the first offset at -1; Kafka's Java client then keeps the relative offsets.
        (0, [0, 1]),
    ],
)
def test_magic_1_wrapper_resolves_relative_inner_offsets(
    wrapper_offset: int, offsets: list[int]
) -> None:
    # Inner offsets 0 and 1 are relative to the set.
    inner = _with_crc32(
        bytes.fromhex("0000000000000000" "00000017" "00000000" "01" "00" "00000000000003e8")
        + bytes.fromhex("ffffffff" "00000001") + b"a"
    ) + _with_crc32(
        bytes.fromhex("0000000000000001" "00000017" "00000000" "01" "00" "00000000000003e9")
        + bytes.fromhex("ffffffff" "00000001") + b"b"
    )  # fmt: skip
    data = _wrapper(1, wrapper_offset, Compression.GZIP, gzip.compress(inner))
    [batch] = decode_batches(data)
    assert batch.compression is Compression.GZIP
    assert [r.offset for r in batch.records] == offsets
    assert [(r.timestamp, r.value) for r in batch.records] == [(1000, b"a"), (1001, b"b")]


def test_magic_0_wrapper_keeps_absolute_inner_offsets() -> None:
    inner = _with_crc32(
        bytes.fromhex("000000000000000a" "0000000f" "00000000" "00" "00" "ffffffff" "00000001")
        + b"a"
    ) + _with_crc32(
        bytes.fromhex("000000000000000b" "0000000f" "00000000" "00" "00" "ffffffff" "00000001")
        + b"b"
    )  # fmt: skip
    data = _wrapper(0, 11, Compression.GZIP, gzip.compress(inner))
    [batch] = decode_batches(data)
    assert list(batch.records) == [
        Record(10, NO_TIMESTAMP, None, b"a"),
        Record(11, NO_TIMESTAMP, None, b"b"),
    ]


def test_commit_marker_is_byte_exact() -> None:
    data = end_transaction_batch(
        EndTransactionMarker(ControlType.COMMIT, coordinator_epoch=7),
        producer_id=42,
        producer_epoch=3,
        timestamp=1000,
    )
    [batch] = decode_batches(data)
    [record] = batch.records
    assert batch.attributes == 0x30  # transactional | control
    assert record.key == bytes.fromhex("00000001")  # version 0, type COMMIT
    assert record.value == bytes.fromhex("000000000007")  # version 0, coordinator epoch 7
    assert decode_end_transaction_marker(record) == EndTransactionMarker(ControlType.COMMIT, 7)
