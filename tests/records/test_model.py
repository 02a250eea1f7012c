"""The decoded values: frozen, comparable, and lazy about their records."""

from __future__ import annotations

import dataclasses

import pytest

from kafkawire.records import (
    Compression,
    CorruptRecordError,
    Header,
    Record,
    RecordBatch,
    RecordBatchBuilder,
    TimestampType,
    decode_batches,
)

from .helpers import v2_batch


def _batch() -> RecordBatch:
    builder = RecordBatchBuilder(compression=Compression.GZIP, base_offset=10)
    builder.append(b"k", b"v", timestamp=5, headers=[("h", b"x")])
    [batch] = decode_batches(builder.build())
    assert isinstance(batch, RecordBatch)
    return batch


def test_values_are_frozen() -> None:
    batch = _batch()
    with pytest.raises(dataclasses.FrozenInstanceError):
        batch.base_offset = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        batch.records[0].value = b"w"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        batch.records[0].headers[0].key = "g"  # type: ignore[misc]


def test_decoded_records_equal_and_hash_like_constructed_ones() -> None:
    record = _batch().records[0]
    expected = Record(10, 5, b"k", b"v", (Header("h", b"x"),))
    assert record == expected
    assert hash(record) == hash(expected)
    assert type(record) is Record
    assert type(record.headers[0]) is Header
    assert repr(record) == repr(expected)


def test_batches_compare_by_value_records_included() -> None:
    first, second = _batch(), _batch()
    assert first == second
    assert hash(first) == hash(second)
    assert first.records == (Record(10, 5, b"k", b"v", (Header("h", b"x"),)),)
    assert first.records != (Record(10, 5, b"k", b"w"),)
    as_list: object = [first.records[0]]
    assert first.records != as_list  # a sequence of records, but not a tuple
    assert first.records[0:1] == tuple(first.records)
    assert len(first.records) == 1


def test_records_decode_on_first_use() -> None:
    broken = v2_batch(b"\x00" * 7, count=2, base_offset=4)  # two records cannot fit in 7 bytes
    [batch] = decode_batches(broken)  # the header is fine: no error yet
    assert "not decoded yet" in repr(batch.records)
    with pytest.raises(CorruptRecordError, match="batch at offset 4"):
        list(batch.records)
    good = _batch()
    list(good.records)
    assert "Record(offset=10" in repr(good.records)


def test_header_properties() -> None:
    batch = _batch()
    assert batch.compression is Compression.GZIP
    assert batch.timestamp_type is TimestampType.CREATE_TIME
    assert (batch.last_offset, batch.next_offset) == (10, 11)
    assert not batch.is_control
    assert not batch.is_transactional
