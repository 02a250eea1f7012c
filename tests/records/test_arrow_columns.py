"""Records as Arrow column buffers: the compiled RecordColumns against its pure twin and
against the records the decoder gives, rows and errors alike."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.records import (
    AbortedTransaction,
    Compression,
    ControlType,
    CorruptRecordError,
    Record,
    RecordBatchBuilder,
    arrow_columns,
    decode_batches,
)
from kafkawire.records.arrow_columns import (
    ColumnBuffers,
    RecordColumns,
    RecordColumnsPure,
    add_fetched,
)
from tests.records.helpers import (
    COMBINATIONS,
    SETTINGS,
    THOROUGH,
    build,
    end_marker,
    expected_records,
    record_inputs,
    transactional_batch,
    v2_batch,
)

TWINS = [pytest.param(RecordColumnsPure, id="pure")]
if arrow_columns.ACCELERATED:
    from kafkawire.records import _accel

    TWINS.append(pytest.param(_accel.RecordColumns, id="compiled"))
    COMPILED: Any = _accel.RecordColumns
else:  # pragma: no cover - the accelerator tests require it where a compiler is found
    COMPILED = None
needs_compiled = pytest.mark.skipif(COMPILED is None, reason="the C extension is not built")

Row = tuple[int, int, int, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]


def _binary_items(buffers: Any, count: int) -> list[bytes | None]:
    bounds = struct.unpack(f"={count + 1}i", buffers.offsets)
    nulls = 0
    items: list[bytes | None] = []
    for index in range(count):
        valid = buffers.validity is None or buffers.validity[index >> 3] >> (index & 7) & 1
        nulls += not valid
        items.append(buffers.data[bounds[index] : bounds[index + 1]] if valid else None)
    assert nulls == buffers.null_count
    assert (buffers.validity is None) == (nulls == 0)
    assert bounds[0] == 0
    assert bounds[-1] == len(buffers.data)
    return items


def rows(columns: ColumnBuffers) -> list[Row]:
    """The rows the buffers hold, read back by their layouts."""
    count = columns.rows
    offsets = struct.unpack(f"={count}q", columns.offsets)
    stamps = struct.unpack(f"={count}q", columns.timestamps)
    types = struct.unpack(f"={count}i", columns.timestamp_types)
    keys = _binary_items(columns.keys, count)
    values = _binary_items(columns.values, count)
    headers: list[tuple[tuple[str, bytes | None], ...]] = [()] * count
    if columns.headers is not None:
        lists = struct.unpack(f"={count + 1}i", columns.headers.lists)
        total = lists[-1]
        names = _binary_items(columns.headers.keys, total)
        data = _binary_items(columns.headers.values, total)
        headers = [
            tuple(
                (bytes(names[at] or b"").decode(), data[at]) for at in range(lists[i], lists[i + 1])
            )
            for i in range(count)
        ]
    return list(zip(offsets, stamps, types, keys, values, headers, strict=True))


def expected_rows(records: Sequence[Record], start: int, end: int, kind: int) -> list[Row]:
    return [
        (
            r.offset,
            r.timestamp * 1000,
            kind,
            r.key,
            r.value,
            tuple((h.key, h.value) for h in r.headers),
        )
        for r in records
        if start <= r.offset < end
    ]


@pytest.mark.parametrize("twin", TWINS)
@pytest.mark.parametrize(("magic", "codec"), COMBINATIONS)
@SETTINGS
@given(data=st.data())
def test_rows_are_the_records_decoded(
    twin: Any, magic: int, codec: Compression, data: st.DataObject
) -> None:
    inputs = data.draw(record_inputs(magic))
    base = data.draw(st.integers(0, 2**40))
    start = data.draw(st.integers(base - 2, base + len(inputs) + 1))
    end = data.draw(st.integers(start, base + len(inputs) + 2))
    columns = RecordColumns(include_headers=True, builder=twin)
    add_fetched(columns, build(magic, codec, inputs, base), None, start=start, end=end)
    kept = rows(columns.finish())
    assert kept == expected_rows(expected_records(magic, inputs, base), start, end, 0)


@needs_compiled
@pytest.mark.parametrize("include_headers", [True, False])
@THOROUGH
@given(data=st.data())
def test_the_twins_give_the_same_buffers(include_headers: bool, data: st.DataObject) -> None:
    parts = []
    base = 0
    for _ in range(data.draw(st.integers(1, 4))):
        magic, codec = data.draw(st.sampled_from(COMBINATIONS))
        inputs = data.draw(record_inputs(magic, min_size=1))
        parts.append(build(magic, codec, inputs, base))
        base += len(inputs)
    start = data.draw(st.integers(-1, base + 1))
    end = data.draw(st.integers(start, base + 1))
    out = []
    for twin in (RecordColumnsPure, COMPILED):
        columns = RecordColumns(include_headers, builder=twin)
        add_fetched(columns, b"".join(parts), None, start=start, end=end)
        out.append(columns.finish())
        assert len(columns) == 0
    assert out[0] == out[1]


def _section(batch: bytes) -> bytes:
    return batch[61:]


@needs_compiled
@THOROUGH
@given(data=st.data())
def test_the_twins_refuse_the_same_corrupt_sections(data: st.DataObject) -> None:
    """A byte changed anywhere in a records section: both twins give the same rows, or both
    raise CorruptRecordError, and a failed section adds nothing."""
    inputs = data.draw(record_inputs(2, min_size=1))
    section = bytearray(_section(build(2, Compression.NONE, inputs)))
    at = data.draw(st.integers(0, len(section) - 1))
    section[at] = data.draw(st.integers(0, 255))
    batch = v2_batch(bytes(section), count=len(inputs))
    results = []
    for twin in (RecordColumnsPure, COMPILED):
        columns = RecordColumns(True, builder=twin)
        try:
            add_fetched(columns, batch, None, start=0, end=2**62)
        except CorruptRecordError:
            assert len(columns) == 0
            results.append("corrupt")
        else:
            results.append(columns.finish())
    assert results[0] == results[1]


@pytest.mark.parametrize("twin", TWINS)
def test_a_failed_batch_adds_nothing(twin: Any) -> None:
    good = build(2, Compression.NONE, [(b"k", b"v", 5, (("h", b"x"),))])
    bad = bytearray(
        build(2, Compression.NONE, [(None, b"a", 1, (("é", b"y"),)), (b"k", None, 2, ())])
    )
    bad[bad.index("é".encode())] = 0xFF  # a header key that is not UTF-8: the batch fails
    bad_batch = v2_batch(_section(bytes(bad)), count=2, base_offset=1)
    columns = RecordColumns(True, builder=twin)
    assert columns.add_batch(next(decode_batches(good)), 0, 10) == 1
    with pytest.raises(CorruptRecordError, match="batch at offset 1: a header key is not UTF-8"):
        columns.add_batch(next(decode_batches(bad_batch)), 0, 10)
    assert rows(columns.finish()) == [(0, 5000, 0, b"k", b"v", (("h", b"x"),))]


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP])
def test_a_section_is_read_where_it_lies_unless_compressed(codec: Compression) -> None:
    """What RecordColumns reads: an uncompressed section as a view of the fetched bytes (not
    copied), a compressed one inflated; the same rows either way (twins: test above)."""
    inputs = [(b"k", b"v" * 30, 5, (("h", b"x"),)), (None, b"w", 6, ())]
    fetched = build(2, codec, inputs)
    [batch] = decode_batches(fetched)
    section = batch.records.read_section(lambda buf, **_: buf)
    assert isinstance(section, memoryview if codec is Compression.NONE else bytes)
    assert bytes(section) == _section(build(2, Compression.NONE, inputs))
    if isinstance(section, memoryview):
        assert section.obj is fetched  # the fetched bytes themselves


@pytest.mark.parametrize("twin", TWINS)
def test_log_append_time_and_timestamps_in_microseconds(twin: Any) -> None:
    builder = RecordBatchBuilder(log_append_time=1_700_000_000_123)
    builder.append(None, b"a", timestamp=5)
    builder.append(None, b"b", timestamp=-1)
    plain = RecordBatchBuilder(base_offset=2)
    plain.append(None, b"c", timestamp=-1)  # no timestamp: -1 ms, -1000 us, as Arrow's multiply
    columns = RecordColumns(False, builder=twin)
    add_fetched(columns, builder.build() + plain.build(), None, start=0, end=3)
    buffers = columns.finish()
    assert buffers.headers is None
    assert [(r[0], r[1], r[2]) for r in rows(buffers)] == [
        (0, 1_700_000_000_123_000, 1),
        (1, 1_700_000_000_123_000, 1),
        (2, -1000, 0),
    ]


@pytest.mark.parametrize("twin", TWINS)
def test_timestamps_past_int64_are_corrupt(twin: Any) -> None:
    builder = RecordBatchBuilder()
    builder.append(None, b"a", timestamp=2**63 - 1)
    builder.append(None, b"b", timestamp=2**63 - 1)
    section = bytearray(_section(builder.build()))
    second = 1 + section[0] // 2  # past the first record's length byte and body
    section[second + 2] = 2  # the second record's timestamp delta becomes +1: past int64
    batch = v2_batch(bytes(section), count=2, base_timestamp=2**63 - 1)
    columns = RecordColumns(False, builder=twin)
    with pytest.raises(CorruptRecordError, match="timestamp does not fit in int64"):
        add_fetched(columns, batch, None, start=0, end=10)
    columns = RecordColumns(False, builder=twin)  # not kept: not read as a row
    add_fetched(columns, batch, None, start=0, end=1)
    assert len(columns) == 1


@pytest.mark.parametrize("twin", TWINS)
def test_aborted_transactions_and_control_batches_are_not_rows(twin: Any) -> None:
    log = b"".join(
        [
            transactional_batch(0, 1, [b"aborted", b"aborted"]),
            transactional_batch(2, 2, [b"committed"]),
            end_marker(3, 1, ControlType.ABORT),
            end_marker(4, 2, ControlType.COMMIT),
            transactional_batch(5, 1, [b"next"]),
        ]
    )
    aborted = [AbortedTransaction(producer_id=1, first_offset=0)]
    columns = RecordColumns(False, builder=twin)
    assert add_fetched(columns, log, aborted, start=1, end=10) == 6
    assert [(r[0], r[4]) for r in rows(columns.finish())] == [(2, b"committed"), (5, b"next")]
    # Without the list (read_uncommitted), the aborted records are rows; markers never are.
    columns = RecordColumns(False, builder=twin)
    add_fetched(columns, log, None, start=1, end=10)
    assert [r[0] for r in rows(columns.finish())] == [1, 2, 5]


def test_a_truncated_last_batch_ends_the_fetch() -> None:
    first = build(2, Compression.NONE, [(None, b"a", 0, ())])
    second = build(2, Compression.NONE, [(None, b"b", 0, ())], base_offset=1)
    columns = RecordColumns(False)
    assert add_fetched(columns, first + second[:-3], None, start=0, end=5) == 1
    assert len(columns) == 1
