"""Every magic x codec survives builder -> bytes -> decode_batches, with every record shape."""

from __future__ import annotations

import os

import pytest
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.records import (
    NO_TIMESTAMP,
    Compression,
    ControlType,
    EndTransactionMarker,
    LegacyRecordBatch,
    RecordBatch,
    RecordBatchBuilder,
    TimestampType,
    decode_batches,
    decode_end_transaction_marker,
    end_transaction_batch,
)

from .helpers import (
    COMBINATIONS,
    SETTINGS,
    RecordInput,
    build,
    builder_for,
    expected_records,
    record_inputs,
    timestamps,
)

pytestmark = pytest.mark.roundtrip


@pytest.mark.parametrize(("magic", "codec"), COMBINATIONS)
def test_records_round_trip(magic: int, codec: Compression) -> None:
    @SETTINGS
    @given(inputs=record_inputs(magic), base_offset=st.integers(0, 2**40))
    def check(inputs: list[RecordInput], base_offset: int) -> None:
        data = build(magic, codec, inputs, base_offset)
        batches = list(decode_batches(data))
        assert [r for b in batches for r in b.records] == expected_records(
            magic, inputs, base_offset
        )
        assert all(b.magic == magic for b in batches)
        if inputs:
            assert batches[-1].next_offset == base_offset + len(inputs)
        if magic == 2:
            [batch] = batches  # an empty v2 batch still has its header (as compaction leaves it)
            assert isinstance(batch, RecordBatch)
            assert batch.compression is codec
            assert batch.records_count == len(inputs)
            assert batch.batch_length + 12 == len(data)
            assert batch.crc == crc32c(data[21:])
        elif codec is not Compression.NONE and inputs:
            [batch] = batches  # one wrapper, at the last inner offset
            assert isinstance(batch, LegacyRecordBatch)
            assert batch.compression is codec
            assert batch.offset == batch.last_offset == base_offset + len(inputs) - 1
        else:
            assert len(batches) == len(inputs)

    check()


@pytest.mark.parametrize(("magic", "codec"), COMBINATIONS)
def test_estimated_size_bounds_the_built_batch(magic: int, codec: Compression) -> None:
    @SETTINGS
    @given(inputs=record_inputs(magic, min_size=1))
    def check(inputs: list[RecordInput]) -> None:
        builder = builder_for(magic, codec)
        for key, value, timestamp, headers in inputs:
            bound = builder.estimated_size_with(key, value, headers)
            builder.append(key, value, timestamp=timestamp, headers=headers)
            assert len(builder.build()) <= builder.estimated_size <= bound
        assert len(builder) == len(inputs)

    check()


@pytest.mark.parametrize(("magic", "codec"), COMBINATIONS)
def test_estimated_size_bounds_incompressible_multi_block_payloads(
    magic: int, codec: Compression
) -> None:
    builder = builder_for(magic, codec)
    for i in range(5):  # 150 KiB of random bytes: several snappy and lz4 blocks
        builder.append(None, os.urandom(30_000), timestamp=i)
    data = builder.build()
    assert len(data) <= builder.estimated_size
    assert [len(r.value or b"") for b in decode_batches(data) for r in b.records] == [30_000] * 5


@SETTINGS
@given(
    inputs=record_inputs(2),
    codec=st.sampled_from(Compression),
    producer_id=st.integers(0, 2**63 - 1),
    producer_epoch=st.integers(0, 2**15 - 1),
    base_sequence=st.integers(0, 2**31 - 1),
    leader_epoch=st.integers(-1, 2**31 - 1),
    transactional=st.booleans(),
)
def test_v2_producer_fields_round_trip(
    *,
    inputs: list[RecordInput],
    codec: Compression,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    leader_epoch: int,
    transactional: bool,
) -> None:
    builder = RecordBatchBuilder(
        compression=codec,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        partition_leader_epoch=leader_epoch,
        transactional=transactional,
    )
    for key, value, timestamp, headers in inputs:
        builder.append(key, value, timestamp=timestamp, headers=headers)
    [batch] = decode_batches(builder.build())
    assert isinstance(batch, RecordBatch)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
        producer_id,
        producer_epoch,
        base_sequence,
    )
    assert batch.partition_leader_epoch == leader_epoch
    assert batch.is_transactional is transactional
    assert not batch.is_control
    assert batch.timestamp_type is TimestampType.CREATE_TIME
    stamps = [t for _, _, t, _ in inputs]
    assert batch.base_timestamp == (stamps[0] if stamps else NO_TIMESTAMP)
    assert batch.max_timestamp == max(stamps, default=NO_TIMESTAMP)
    assert batch.last_offset_delta == max(len(inputs) - 1, 0)
    assert list(batch.records) == expected_records(2, inputs)


@pytest.mark.parametrize(("magic", "codec"), [c for c in COMBINATIONS if c[0] > 0])
def test_log_append_time_gives_every_record_the_batch_timestamp(
    magic: int, codec: Compression
) -> None:
    @SETTINGS
    @given(inputs=record_inputs(magic, min_size=1), append_time=timestamps)
    def check(inputs: list[RecordInput], append_time: int) -> None:
        builder = builder_for(magic, codec, log_append_time=append_time)
        for key, value, timestamp, headers in inputs:
            builder.append(key, value, timestamp=timestamp, headers=headers)
        batches = list(decode_batches(builder.build()))
        assert all(b.timestamp_type is TimestampType.LOG_APPEND_TIME for b in batches)
        records = [r for b in batches for r in b.records]
        assert [r.timestamp for r in records] == [append_time] * len(inputs)
        assert [(r.key, r.value) for r in records] == [(k, v) for k, v, _, _ in inputs]

    check()


@SETTINGS
@given(
    kind=st.sampled_from([ControlType.ABORT, ControlType.COMMIT]),
    coordinator_epoch=st.integers(-(2**31), 2**31 - 1),
    producer_id=st.integers(0, 2**63 - 1),
    producer_epoch=st.integers(0, 2**15 - 1),
    base_offset=st.integers(0, 2**40),
    timestamp=st.integers(0, 2**42),
)
def test_control_batches_round_trip(
    *,
    kind: ControlType,
    coordinator_epoch: int,
    producer_id: int,
    producer_epoch: int,
    base_offset: int,
    timestamp: int,
) -> None:
    marker = EndTransactionMarker(kind, coordinator_epoch)
    data = end_transaction_batch(
        marker,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        timestamp=timestamp,
        base_offset=base_offset,
    )
    [batch] = decode_batches(data)
    assert isinstance(batch, RecordBatch)
    assert batch.is_control
    assert batch.is_transactional
    assert (batch.producer_id, batch.producer_epoch) == (producer_id, producer_epoch)
    [record] = batch.records
    assert (record.offset, record.timestamp) == (base_offset, timestamp)
    assert decode_end_transaction_marker(record) == marker
    assert marker.committed is (kind is ControlType.COMMIT)
