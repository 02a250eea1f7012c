"""Appending many records in one call from columns (lists or Arrow arrays, read in place):
the compiled appender and its pure twin give the same bytes, measures and errors, and what
they append is what one append per record writes."""

from __future__ import annotations

from array import array
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.records import v2_records
from kafkawire.records.columns import column, items, timestamp_column

from .helpers import SETTINGS, THOROUGH, header_lists, keys, values

needs_accel = pytest.mark.skipif(
    not v2_records.ACCELERATED, reason="the C extension is not built, or disabled"
)
OVERHEAD, HEADER_OVERHEAD = 21, 10

rows = st.lists(
    st.tuples(keys, values, st.integers(0, 2**42), st.none() | header_lists), max_size=25
)
wrong = st.sampled_from(["text", 1, bytearray(b"b")])


def _columns(drawn: list[Any], arrow: bool) -> dict[str, Any]:
    keys_ = [row[0] for row in drawn]
    values_ = [row[1] for row in drawn]
    stamps = [row[2] for row in drawn]
    headers = [row[3] for row in drawn]
    if arrow:
        return {
            "keys": column(pa.array(keys_, pa.binary()), "keys"),
            "values": column(pa.array(values_, pa.large_binary()), "values"),
            "timestamps": timestamp_column(pa.array(stamps, pa.int64())),
            "headers": headers,
        }
    return {
        "keys": column(keys_, "keys"),
        "values": column(values_, "values"),
        "timestamps": timestamp_column(stamps),
        "headers": headers,
    }


def _append(
    cls: type[Any], columns: dict[str, Any], *, order: bytes | None, room: int, soft_room: int
) -> Any:
    records = cls()
    positions = len(items(columns["values"], 0)) if order is None else len(order) // 4
    try:
        outcome = records.append_columns(
            **columns,
            timestamp=0,
            order=order,
            start=0,
            stop=positions,
            room=room,
            soft_room=soft_room,
            overhead=OVERHEAD,
            header_overhead=HEADER_OVERHEAD,
        )
    except Exception as exc:
        outcome = (type(exc), str(exc))
    return outcome, len(records), records.base_timestamp, records.encoded()


@needs_accel
@THOROUGH
@given(rows, st.booleans(), st.integers(-1, 3_000), st.integers(-1, 600), st.data())
def test_the_compiled_and_pure_appenders_agree(
    drawn: list[Any], arrow: bool, room: int, soft_room: int, data: st.DataObject
) -> None:
    columns = _columns(drawn, arrow and bool(drawn))
    if drawn and not arrow and data.draw(st.booleans()):  # a wrong item somewhere
        index = data.draw(st.integers(0, len(drawn) - 1))
        which = data.draw(st.sampled_from(["keys", "values", "timestamps"]))
        listed = list(columns[which][1])
        listed[index] = data.draw(wrong)
        columns[which] = (columns[which][0], listed)
    order = None
    if drawn and data.draw(st.booleans()):
        order = array("i", data.draw(st.permutations(range(len(drawn))))).tobytes()
    assert _append(
        v2_records.EncodedRecords, columns, order=order, room=room, soft_room=soft_room
    ) == _append(
        v2_records.EncodedRecordsPure, columns, order=order, room=room, soft_room=soft_room
    )
    measured = {k: columns[k] for k in ("keys", "values", "headers")}

    def measure(function: Any) -> Any:
        try:
            return function(**measured, overhead=OVERHEAD, header_overhead=HEADER_OVERHEAD)
        except Exception as exc:
            return type(exc), str(exc)

    assert measure(v2_records.measure_columns) == measure(v2_records.measure_columns_pure)


@SETTINGS
@given(rows, st.booleans())
def test_a_column_appends_what_one_append_per_record_writes(drawn: list[Any], arrow: bool) -> None:
    one_by_one = v2_records.EncodedRecordsPure()
    for key, value, stamp, headers in drawn:
        one_by_one.append(key, value, timestamp=stamp, headers=headers or ())
    outcome, count, _, encoded = _append(
        v2_records.EncodedRecords,
        _columns(drawn, arrow and bool(drawn)),
        order=None,
        room=-1,
        soft_room=-1,
    )
    weights = [
        OVERHEAD
        + len(k or b"")
        + len(v or b"")
        + sum(HEADER_OVERHEAD + len(n.encode()) + len(d or b"") for n, d in h or ())
        for k, v, _, h in drawn
    ]
    assert outcome == (len(drawn), sum(weights), 0)
    assert (count, encoded) == (len(drawn), one_by_one.encoded())


def test_room_stops_before_the_record_that_does_not_fit_and_soft_room_after_it() -> None:
    columns = _columns([(None, b"x" * 79, 0, None)] * 5, arrow=False)  # 100 each
    assert _append(v2_records.EncodedRecords, columns, order=None, room=250, soft_room=-1)[0] == (
        2,
        200,
        100,
    )
    assert _append(v2_records.EncodedRecords, columns, order=None, room=-1, soft_room=250)[0] == (
        3,
        300,
        0,
    )


@pytest.mark.parametrize(
    ("offsets", "error"),
    [
        (array("i", [0, 5, 3]), "not within the data"),
        (array("i", [0, 2, 99]), "not within the data"),
        (array("i", [0, 2]), "shorter than the array"),
    ],
)
def test_arrow_buffers_that_do_not_hold_the_array_are_refused(offsets: Any, error: str) -> None:
    spec = (2, (None, offsets.tobytes(), b"abcdef", 0, 2, False))
    for cls in {v2_records.EncodedRecords, v2_records.EncodedRecordsPure}:
        if cls is v2_records.EncodedRecordsPure:
            continue  # the pure twin reads lists: a column() never makes such buffers
        with pytest.raises(ValueError, match=error):
            cls().append_columns(
                values=spec,
                keys=(0, None),
                headers=None,
                timestamps=(0, None),
                timestamp=0,
                order=None,
                start=0,
                stop=2,
                room=-1,
                soft_room=-1,
                overhead=0,
                header_overhead=0,
            )
