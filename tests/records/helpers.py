"""Shared pieces of the records tests: strategies, builders for every format, and raw layouts."""

from __future__ import annotations

import struct
import tracemalloc
import zlib
from collections.abc import Callable, Sequence

from crc32c import crc32c
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from kafkawire.records import (
    NO_TIMESTAMP,
    BatchBuilder,
    Compression,
    ControlType,
    EndTransactionMarker,
    Header,
    LegacyBatchBuilder,
    Record,
    RecordBatchBuilder,
    end_transaction_batch,
)
from tests.budgets import examples

# Every test that draws examples uses this budget: enough to find edge cases, while the
# whole records suite stays well under a minute on two cores (tests/budgets.py).
SETTINGS = settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# For the cheap properties worth more examples: fuzzing, codec bounds.
THOROUGH = settings(SETTINGS, max_examples=examples(300))

MiB = 1024 * 1024
# What a measured peak may pass its bound by: interpreter noise and the test's own objects,
# far below the sizes at stake.
SLACK = 256 * 1024

MAGICS = (0, 1, 2)
# Kafka has no zstd below magic 2 (KIP-110): the builders refuse it, as Java's does.
COMBINATIONS = [
    (magic, codec)
    for magic in MAGICS
    for codec in Compression
    if magic == 2 or codec is not Compression.ZSTD
]

RecordInput = tuple[bytes | None, bytes | None, int, tuple[tuple[str, bytes | None], ...]]

keys = st.none() | st.binary(max_size=40)
values = st.none() | st.binary(max_size=300)
timestamps = st.integers(0, 2**42)
header_lists = st.lists(
    st.tuples(st.text(max_size=12), st.none() | st.binary(max_size=20)), max_size=3
).map(tuple)


def record_inputs(magic: int, *, min_size: int = 0) -> st.SearchStrategy[list[RecordInput]]:
    """Lists of (key, value, timestamp, headers); legacy formats get no headers."""
    headers = header_lists if magic == 2 else st.just(())
    return st.lists(st.tuples(keys, values, timestamps, headers), min_size=min_size, max_size=25)


def builder_for(
    magic: int,
    codec: Compression = Compression.NONE,
    *,
    base_offset: int = 0,
    log_append_time: int | None = None,
) -> BatchBuilder:
    if magic == 2:
        return RecordBatchBuilder(
            compression=codec, base_offset=base_offset, log_append_time=log_append_time
        )
    return LegacyBatchBuilder(
        magic, compression=codec, base_offset=base_offset, log_append_time=log_append_time
    )


def build(
    magic: int, codec: Compression, inputs: Sequence[RecordInput], base_offset: int = 0
) -> bytes:
    builder = builder_for(magic, codec, base_offset=base_offset)
    for key, value, timestamp, headers in inputs:
        builder.append(key, value, timestamp=timestamp, headers=headers)
    return builder.build()


def expected_records(
    magic: int, inputs: Sequence[RecordInput], base_offset: int = 0
) -> list[Record]:
    return [
        Record(
            base_offset + i,
            timestamp if magic else NO_TIMESTAMP,
            key,
            value,
            tuple(Header(k, v) for k, v in headers),
        )
        for i, (key, value, timestamp, headers) in enumerate(inputs)
    ]


def transactional_batch(base_offset: int, producer_id: int, values: list[bytes | None]) -> bytes:
    """A transactional batch of ``values``, keyed every other record, each with a header."""
    builder = RecordBatchBuilder(
        base_offset=base_offset, producer_id=producer_id, producer_epoch=0, transactional=True
    )
    for i, value in enumerate(values):
        builder.append(None if i % 2 else b"key", value, timestamp=1000 + i, headers=[("t", b"x")])
    return builder.build()


def end_marker(base_offset: int, producer_id: int, kind: ControlType) -> bytes:
    """The control batch that ends ``producer_id``'s transaction (ABORT or COMMIT)."""
    return end_transaction_batch(
        EndTransactionMarker(kind, coordinator_epoch=0),
        producer_id=producer_id,
        producer_epoch=0,
        timestamp=0,
        base_offset=base_offset,
    )


V2_HEADER = struct.Struct(">qiibIhiqqqhii")


def v2_batch(
    records: bytes,
    *,
    count: int,
    base_offset: int = 0,
    attributes: int = 0,
    base_timestamp: int = 0,
    magic: int = 2,
) -> bytes:
    """A v2 batch around a hand-made records section, with a correct length and crc32c."""
    header = V2_HEADER.pack(
        base_offset, 49 + len(records), -1, magic, 0, attributes, max(count - 1, 0),
        base_timestamp, base_timestamp, -1, -1, -1, count,
    )  # fmt: skip
    crc = crc32c(header[21:] + records)
    return header[:17] + struct.pack(">I", crc) + header[21:] + records


def legacy_message(
    magic: int,
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    attributes: int = 0,
    timestamp: int = 0,
) -> bytes:
    """A legacy message written out field by field, with a correct size and crc32."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def peak_memory(call: Callable[[], object]) -> int:
    """The most memory tracemalloc saw in use at once while ``call`` ran.

    Every buffer the codecs fill is a Python object, so it is traced; cramjam's own small
    working memory is not, and needs no bound here.
    """
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
