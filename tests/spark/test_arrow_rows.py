"""The read path's Arrow batches, built from the fetched bytes in C, against the row path it
replaced (tests/spark/row_path.py): the same rows, column for column, for every kind of
fetched data (null keys and values, headers, every codec, log-append time, legacy message
sets, transactions with aborts and their markers, batches cut at the range's ends)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.records import (
    AbortedTransaction,
    Compression,
    ControlType,
    RecordBatchBuilder,
)
from kafkawire.records.arrow_columns import RecordColumns, RecordColumnsPure, add_fetched
from kafkawire.spark.arrow import to_batch
from tests.records.helpers import (
    COMBINATIONS,
    SETTINGS,
    build,
    end_marker,
    record_inputs,
    transactional_batch,
)

from .row_path import old_fetch_rows

TOPIC, PARTITION = "t", 3
BUILDERS = [pytest.param(None, id="compiled"), pytest.param(RecordColumnsPure, id="pure")]


def _answer(records: bytes, aborted: list[AbortedTransaction] | None = None) -> Any:
    """A FetchResponse partition's answer, as far as the read paths look at it."""
    return SimpleNamespace(
        records=memoryview(records),
        aborted_transactions=aborted,
        high_watermark=1 << 40,
        log_start_offset=0,
        last_stable_offset=-1,
    )


def _new_path(answer: Any, start: int, end: int, include_headers: bool, builder: Any) -> Any:
    columns = RecordColumns(include_headers, builder=builder)
    next_offset = add_fetched(
        columns, answer.records, answer.aborted_transactions, start=start, end=end
    )
    batch = to_batch(TOPIC, PARTITION, columns.finish(), include_headers) if len(columns) else None
    return batch, next_offset


def _same(answer: Any, start: int, end: int, builder: Any) -> None:
    for include_headers in (False, True):
        old, old_next = old_fetch_rows(
            answer, TOPIC, PARTITION, start, end=end, include_headers=include_headers
        )
        new, new_next = _new_path(answer, start, end, include_headers, builder)
        assert new_next == old_next
        assert (new is None) == (old is None)
        if old is not None:
            new.validate(full=True)
            assert new.schema == old.schema
            assert new.to_pylist() == old.to_pylist()
            assert new.equals(old)


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize(("start", "end"), [(0, 100), (1, 100), (3, 9), (6, 7), (11, 100)], ids=str)
@pytest.mark.parametrize("listed", [True, False], ids=["read_committed", "read_uncommitted"])
def test_transactions_with_aborts(builder: Any, start: int, end: int, listed: bool) -> None:
    log = b"".join(
        [
            transactional_batch(0, 1, [b"aborted", None]),  # 0-1, aborted at 4
            transactional_batch(2, 2, [b"committed", b"too"]),  # 2-3, committed at 5
            end_marker(4, 1, ControlType.ABORT),
            end_marker(5, 2, ControlType.COMMIT),
            transactional_batch(6, 1, [b"next"]),  # 6, committed at 8
            build(2, Compression.LZ4, [(None, b"plain", 7, (("h", None),))], base_offset=7),
            end_marker(8, 1, ControlType.COMMIT),
            transactional_batch(9, 3, [b"open", b"still"]),  # 9-10, aborted later: listed
        ]
    )
    aborted = [AbortedTransaction(1, 0), AbortedTransaction(3, 9)] if listed else None
    _same(_answer(log, aborted), start, end, builder)


@pytest.mark.parametrize("builder", BUILDERS)
@SETTINGS
@given(data=st.data())
def test_any_fetched_data(builder: Any, data: st.DataObject) -> None:
    parts, base = [], data.draw(st.integers(0, 2**40))
    first = base
    for _ in range(data.draw(st.integers(1, 4))):
        magic, codec = data.draw(st.sampled_from(COMBINATIONS))
        inputs = data.draw(record_inputs(magic, min_size=1))
        parts.append(build(magic, codec, inputs, base))
        base += len(inputs)
    log = b"".join(parts)
    cut = data.draw(st.integers(0, 40))  # a last batch cut short, as a fetch's can be
    start = data.draw(st.integers(first - 1, base + 1))
    end = data.draw(st.integers(start, base + 2))
    _same(_answer(log[: len(log) - cut]), start, end, builder)


@pytest.mark.parametrize("builder", BUILDERS)
def test_log_append_time_null_keys_and_headers(builder: Any) -> None:
    appended = RecordBatchBuilder(log_append_time=1_700_000_000_000, compression=Compression.ZSTD)
    appended.append(None, None, timestamp=1, headers=[("ключ", None), ("k", b"")])
    appended.append(b"", b"v", timestamp=2)
    created = RecordBatchBuilder(base_offset=2, compression=Compression.GZIP)
    created.append(b"k", None, timestamp=-1, headers=[("a", b"1"), ("b", b"2")])
    _same(_answer(appended.build() + created.build()), 0, 10, builder)


def test_an_empty_fetch_gives_no_batch() -> None:
    _same(_answer(b""), 5, 10, None)
