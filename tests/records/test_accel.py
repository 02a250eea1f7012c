"""The compiled record loop (``kafkawire.records._accel``): in use when built, and identical.

The decoding tests of the other modules run against both loops (see ``conftest.py``); here
the two loops are also compared head to head on records sections alone, well-formed and not:
every outcome, records or error reason, must be the same.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkawire.records import (
    CorruptRecordError,
    Header,
    InvalidRecordError,
    Record,
    RecordBatchBuilder,
    batch_v2,
    v2_records,
)

from .helpers import THOROUGH, header_lists, keys, values

DISABLED = bool(os.environ.get("KAFKAWIRE_NO_EXTENSIONS"))
BUILT = importlib.util.find_spec("kafkawire.records._accel") is not None
needs_accel = pytest.mark.skipif(
    not v2_records.ACCELERATED, reason="the C extension is not built, or disabled"
)

INT64 = (-(2**63), 2**63 - 1)
# Base offsets and timestamps: typical ones, and int64's ends (where the sums leave int64).
bases = st.sampled_from([0, 1, 1_700_000_000_000, *INT64, INT64[1] - 5, INT64[0] + 5])
bases |= st.integers(*INT64)
log_append_times = st.none() | bases


def test_the_compiled_loop_is_in_use_when_built_and_not_disabled() -> None:
    assert v2_records.ACCELERATED is (BUILT and not DISABLED)
    assert batch_v2.read_records is v2_records.read_records  # as imported, unswapped
    if v2_records.ACCELERATED:
        assert v2_records.read_records is not v2_records.read_records_pure
        assert type(v2_records.read_records).__name__ == "builtin_function_or_method"
    else:
        assert v2_records.read_records is v2_records.read_records_pure


def test_kafkawire_no_extensions_forces_the_pure_loop() -> None:
    code = (
        "from kafkawire.records import batch_v2, v2_records as v;"
        "print(v.ACCELERATED, batch_v2.read_records is v.read_records_pure)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, KAFKAWIRE_NO_EXTENSIONS="1"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.split() == ["False", "True"]


# -- the two loops, head to head ------------------------------------------------------------


def _read(read: Callable[..., Any], buf: bytes, **kwargs: Any) -> tuple[str, Any]:
    """``("read", what a loop returned)``, or its error as the batch decoder reports it."""
    try:
        return "read", read(buf, **kwargs)
    except CorruptRecordError as exc:
        return "error", exc.reason
    except IndexError:
        return "error", "a record runs past the end of the batch"
    except UnicodeDecodeError:
        return "error", "a header key is not UTF-8"


def _outcome(
    read: Callable[..., tuple[Record, ...]], buf: bytes, **kwargs: Any
) -> tuple[str, object]:
    """What a loop gives, as the batch decoder reports it: the records, or the error reason."""
    kind, records = _read(read, buf, **kwargs)
    if kind == "error":
        return kind, records
    assert type(records) is tuple
    for record in records:
        assert type(record) is Record
        assert type(record.offset) is int
        assert type(record.timestamp) is int
        assert record.key is None or type(record.key) is bytes
        assert record.value is None or type(record.value) is bytes
        assert type(record.headers) is tuple
        assert all(type(h) is Header and type(h.key) is str for h in record.headers)
        assert all(h.value is None or type(h.value) is bytes for h in record.headers)
    return "records", records


def _same(buf: bytes, count: int, base_offset: int, base_timestamp: int, lat: int | None) -> None:
    kwargs: dict[str, Any] = {
        "base_offset": base_offset,
        "base_timestamp": base_timestamp,
        "log_append_time": lat,
        "count": count,
    }
    pure = _outcome(v2_records.read_records_pure, buf, **kwargs)
    compiled = _outcome(v2_records.read_records, buf, **kwargs)
    assert compiled == pure
    if compiled[0] == "error":
        with pytest.raises(CorruptRecordError) as caught:
            v2_records.read_records(buf, **kwargs)
        assert caught.value.base_offset == base_offset  # the C loop names the batch itself


def _varint(value: int, padding: int = 0) -> bytes:
    """The zigzag varint of ``value``, stretched by ``padding`` redundant continuation bytes."""
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    if padding:
        out.append(raw | 0x80)
        out += b"\x80" * (padding - 1)
        raw = 0
    out.append(raw)
    return bytes(out)


varint_values = st.integers(-3, 3) | st.integers(-(2**31), 2**31 - 1) | st.sampled_from(INT64)
paddings = st.sampled_from([0] * 6 + [1, 2, 3, 4, 5, 8, 9])


@st.composite
def records_sections(draw: st.DrawFn) -> tuple[bytes, int]:
    """Records written field by field, every varint possibly stretched or out of range."""

    stretch = draw(st.integers(0, 3)) == 0  # some sections stretch some varints

    def varint(value: st.SearchStrategy[int]) -> bytes:
        return _varint(draw(value), draw(paddings) if stretch else 0)

    section = b""
    count = draw(st.integers(0, 4))
    for _ in range(count):
        wide = draw(st.integers(0, 5)) == 0
        body = b"\x00" + varint(varint_values if wide else st.integers(-100, 100))
        body += varint(st.integers(-(2**31), 2**31 - 1) if wide else st.integers(0, 100))
        for field in (draw(keys), draw(values)):
            body += _varint(-1) if field is None else varint(st.just(len(field))) + field
        headers = draw(header_lists)
        body += varint(st.just(len(headers)))
        for key, value in headers:
            raw = key.encode()
            body += varint(st.just(len(raw))) + raw
            body += _varint(-1) if value is None else varint(st.just(len(value))) + value
        if draw(st.integers(0, 5)) == 0:  # now and then, something off
            body = draw(st.sampled_from([body[:-1], body + b"\x00", body[1:]]))
        length = draw(st.sampled_from([len(body)] * 12 + [len(body) + 1, len(body) - 1, -1]))
        section += _varint(length, draw(paddings) if stretch else 0) + body
    return section, draw(st.sampled_from([count] * 8 + [count + 1, max(count - 1, 0)]))


@needs_accel
@THOROUGH
@given(section=records_sections(), base=bases, timestamp=bases, lat=log_append_times)
def test_both_loops_agree_on_crafted_records(
    section: tuple[bytes, int], base: int, timestamp: int, lat: int | None
) -> None:
    buf, count = section
    _same(buf, count, base, timestamp, lat)


@needs_accel
@THOROUGH
@given(buf=st.binary(max_size=200), count=st.integers(0, 30), base=bases, lat=log_append_times)
def test_both_loops_agree_on_arbitrary_bytes(
    buf: bytes, count: int, base: int, lat: int | None
) -> None:
    _same(buf, count, base, base, lat)


def _built_section() -> tuple[bytes, int]:
    builder = RecordBatchBuilder()
    builder.append(b"key", b"value" * 30, timestamp=5, headers=[("a", b"b"), ("\u00e9", None)])
    builder.append(None, b"x" * 200, timestamp=10_000_000, headers=[("k", b"")])
    builder.append(b"", None, timestamp=-3)
    return builder.build()[61:], 3


@needs_accel
def test_both_loops_agree_on_every_truncation_and_count() -> None:
    section, count = _built_section()
    for cut in range(len(section) + 1):
        for n in range(count + 2):
            _same(section[:cut], n, 7, 1_000, None)


@needs_accel
@THOROUGH
@given(data=st.data(), lat=log_append_times)
def test_both_loops_agree_on_mutated_records(data: st.DataObject, lat: int | None) -> None:
    section, count = _built_section()
    buffer = bytearray(section)
    for _ in range(data.draw(st.integers(1, 4))):
        buffer[data.draw(st.integers(0, len(buffer) - 1))] = data.draw(st.integers(0, 255))
    _same(bytes(buffer), count, 100, 1_700_000_000_000, lat)


@needs_accel
@pytest.mark.parametrize(
    ("timestamp_delta", "offset_delta"),
    [(INT64[1], 2**31 - 1), (INT64[0], -(2**31)), (-1, -1), (2**40, 1)],
)
@pytest.mark.parametrize("base", [*INT64, 0])
def test_offsets_and_timestamps_leave_int64_as_python_ints(
    timestamp_delta: int, offset_delta: int, base: int
) -> None:
    body = b"\x00" + _varint(timestamp_delta) + _varint(offset_delta) + b"\x01\x01\x00"
    buf = _varint(len(body)) + body
    [record] = v2_records.read_records(
        buf, base_offset=base, base_timestamp=base, log_append_time=None, count=1
    )
    assert record == Record(base + offset_delta, base + timestamp_delta, None, None)
    _same(buf, 1, base, base, None)


@needs_accel
def test_setup_refuses_classes_whose_slots_it_does_not_know() -> None:
    from dataclasses import dataclass

    from kafkawire.records import _accel

    @dataclass(frozen=True, slots=True)
    class Wider:
        offset: int
        timestamp: int
        key: bytes | None
        value: bytes | None
        headers: tuple[Header, ...]
        leader_epoch: int

    @dataclass(frozen=True)
    class NoSlots:
        key: str
        value: bytes | None

    with pytest.raises(TypeError, match="slot layout"):
        _accel.setup(Wider, Header, CorruptRecordError, InvalidRecordError)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="slot layout"):
        _accel.setup(Record, NoSlots, CorruptRecordError, InvalidRecordError)  # type: ignore[arg-type]
    # A refused set-up changes nothing.
    section, count = _built_section()
    _same(section, count, 0, 0, None)


# -- hostile input and hostile surroundings (regressions) -----------------------------------


@needs_accel
def test_a_few_bytes_claiming_many_headers_allocate_no_big_tuple() -> None:
    # A record that claims 2**25 bytes and 2**24 headers in 16 bytes: the pure loop fails on
    # the first header, and so must the C loop, without a 128 MiB tuple for them first (with
    # 2**30 headers, that was 8 GiB of memory touched, or a MemoryError, from 16 bytes).
    import tracemalloc

    count = 2**24
    body = b"\x00" + _varint(0) + _varint(0) + _varint(-1) + _varint(-1) + _varint(count)
    buf = _varint(2 * count + 16) + body
    tracemalloc.start()
    try:
        with pytest.raises(CorruptRecordError, match="runs past the end"):
            v2_records.read_records(
                buf, base_offset=0, base_timestamp=0, log_append_time=None, count=1
            )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    for claimed in (count, 2**30 - 8, 2**31 - 1):
        body = b"\x00" + _varint(0) + _varint(0) + _varint(-1) + _varint(-1) + _varint(claimed)
        _same(_varint(2**31 - 1) + body, 1, 0, 0, None)
        _same(_varint(2**31 - 1) + body + b"\x00\x01" * 3, 1, 0, 0, None)


@needs_accel
@pytest.mark.parametrize("count", [2**63, 2**64, 2**100, -(2**63) - 1, -(2**100), True])
@pytest.mark.parametrize(
    "buf", [b"", b"\x00", _built_section()[0]], ids=["empty", "one byte", "built"]
)
def test_counts_of_any_size_read_as_in_the_pure_loop(count: int, buf: bytes) -> None:
    _same(buf, count, 0, 0, None)


@needs_accel
def test_setup_refuses_a_slot_name_bound_to_another_slot() -> None:
    # Two names for one slot would leave another slot unwritten: garbage the record's
    # deallocation would then release.
    from dataclasses import dataclass

    from kafkawire.records import _accel

    @dataclass(frozen=True, slots=True)
    class Aliased:
        offset: int
        timestamp: int
        key: bytes | None
        value: bytes | None
        headers: tuple[Header, ...]

    Aliased.key = Aliased.__dict__["value"]  # type: ignore[misc]
    try:
        with pytest.raises(TypeError, match="not an object slot"):
            _accel.setup(Aliased, Header, CorruptRecordError, InvalidRecordError)  # type: ignore[arg-type]
    finally:
        _accel.setup(
            Record, Header, CorruptRecordError, InvalidRecordError
        )  # whatever happened above
    section, count = _built_section()
    _same(section, count, 0, 0, None)


@needs_accel
def test_no_half_built_tuple_is_visible_to_the_gc() -> None:
    # A collection during decoding (here after every allocation) whose callback looks at the
    # young objects must find no tuple with missing items: it crashed on the headers tuple.
    # In a subprocess, since the failure is a crash.
    code = """if True:
        import gc
        from kafkawire.records import v2_records

        assert v2_records.ACCELERATED

        def varint(value):
            raw, out = (value << 1) ^ (value >> 63), bytearray()
            while raw >= 0x80:
                out.append(raw & 0x7F | 0x80)
                raw >>= 7
            return bytes(out + bytes([raw]))

        def look(phase, info):
            if phase == "start":
                for obj in gc.get_objects(0):
                    if type(obj) is tuple:
                        list(obj)

        body = b"\\x00\\x00\\x00\\x01\\x01" + varint(20) + (b"\\x02a\\x02b" * 20)
        buf = varint(len(body)) + body
        gc.callbacks.append(look)
        gc.set_threshold(1)
        for _ in range(10):
            v2_records.read_records(
                buf * 3, base_offset=0, base_timestamp=0, log_append_time=None, count=3
            )
        gc.set_threshold(700)
        print("ok")
    """
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120
    )
    assert (result.returncode, result.stdout.strip()) == (0, "ok"), result.stderr


# -- EncodedRecords: what a batch builder appends to ---------------------------------------

_bytes_like = st.binary(max_size=300).flatmap(
    lambda data: st.sampled_from([data, bytearray(data), memoryview(data)])
)
_nullable = st.none() | _bytes_like
_wrong = st.sampled_from(["text", 7, 1.5, [b"x"], object()])
_timestamps = st.integers(*INT64) | st.sampled_from([0, 1_700_000_000_000, 2**63, -(2**63) - 1])
_header_key = st.text(max_size=12) | st.just("\ud800")  # a lone surrogate is not UTF-8
_header = st.tuples(_header_key, _nullable).flatmap(
    lambda pair: st.sampled_from([pair, Header(pair[0], pair[1])])  # type: ignore[arg-type]
)
_headers = (
    st.lists(_header, max_size=12).map(tuple)  # past the 8 described on the C stack
    | st.lists(st.one_of(_header, _wrong, st.tuples(st.text(), st.integers())), max_size=3)
    | st.sampled_from([(), [], None, 5])
)
_appends = st.lists(
    st.tuples(
        _nullable | _wrong,
        _nullable | _wrong,
        _timestamps | st.sampled_from([1.5, "1"]),
        _headers,
    ),
    max_size=15,
)


def _run(records_cls: type[Any], appends: list[tuple[Any, Any, Any, Any]]) -> list[Any]:
    """Every append's outcome (offset delta or error), and the state after each."""
    records = records_cls()
    seen: list[Any] = []
    for key, value, timestamp, headers in appends:
        kwargs = {} if headers is None else {"headers": headers}
        try:
            outcome: Any = records.append(key, value, timestamp=timestamp, **kwargs)
        except Exception as exc:
            outcome = (type(exc), str(exc))
        state = (len(records), records.base_timestamp, records.max_timestamp)
        seen.append((outcome, state, records.encoded_size, records.encoded()))
    return seen


@needs_accel
@THOROUGH
@given(_appends)
def test_compiled_and_pure_encoded_records_agree(appends: list[Any]) -> None:
    assert _run(v2_records.EncodedRecords, appends) == _run(v2_records.EncodedRecordsPure, appends)


@given(st.lists(st.tuples(keys, values, st.integers(0, 2**42), header_lists), max_size=20))
def test_what_is_appended_reads_back(appends: list[Any]) -> None:
    for records_cls in {v2_records.EncodedRecords, v2_records.EncodedRecordsPure}:
        records = records_cls()
        for key, value, timestamp, headers in appends:
            records.append(key, value, timestamp=timestamp, headers=headers)
        read = v2_records.read_records_pure(
            records.encoded(),
            base_offset=0,
            base_timestamp=records.base_timestamp,
            log_append_time=None,
            count=len(records),
        )
        assert [(r.offset, r.timestamp, r.key, r.value) for r in read] == [
            (i, t, k, v) for i, (k, v, t, _) in enumerate(appends)
        ]
        assert [[(h.key, h.value) for h in r.headers] for r in read] == [
            list(h) for *_, h in appends
        ]


@needs_accel
@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((b"k",), {"timestamp": 0}, "missing required argument: 'value'"),
        ((b"k", b"v"), {}, "missing required argument: 'timestamp'"),
        ((b"k", b"v", 0), {}, "takes 2 positional arguments but 3 were given"),
        ((b"k", b"v"), {"timestamp": 0, "stamp": 1}, "unexpected keyword argument 'stamp'"),
        (
            (b"k",),
            {"key": b"k", "value": b"v", "timestamp": 0},
            "multiple values for argument 'key'",
        ),
    ],
)
def test_the_compiled_append_checks_its_arguments(
    args: tuple[Any, ...], kwargs: dict[str, Any], message: str
) -> None:
    records = v2_records.EncodedRecords()
    with pytest.raises(TypeError, match=message):
        records.append(*args, **kwargs)
    records.append(key=b"k", value=None, headers=[("h", b"")], timestamp=3)  # every keyword
    assert (len(records), records.max_timestamp) == (1, 3)


@needs_accel
def test_a_header_made_without_init_is_refused_not_read() -> None:
    empty = object.__new__(Header)
    with pytest.raises(TypeError, match="without a key or value"):
        v2_records.EncodedRecords().append(b"k", b"v", timestamp=0, headers=[empty])


def test_the_batch_builder_appends_through_the_encoded_records_in_use() -> None:
    assert issubclass(RecordBatchBuilder, v2_records.EncodedRecords)
    if v2_records.ACCELERATED:  # no Python frame between a producer and the C append
        assert type(RecordBatchBuilder.append).__name__ == "method_descriptor"


@needs_accel
@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ in Python needs 3.12")
def test_python_code_run_while_taking_a_buffer_cannot_free_what_append_reads() -> None:
    # A header value whose buffer method rebinds the Header's key and empties the list of
    # headers: the append reads neither from freed memory (it crashed before it held them).
    headers: list[Any] = []
    header = Header("key-" + "x" * 50, None)

    class Hostile:
        def __buffer__(self, flags: int) -> memoryview:
            object.__setattr__(header, "key", "other")
            headers.clear()
            return memoryview(b"value")

    headers += [header, ("second", Hostile()), ("third", b"3")]
    records = v2_records.EncodedRecords()
    records.append(b"k", b"v", timestamp=0, headers=headers)
    [record] = v2_records.read_records_pure(
        records.encoded(), base_offset=0, base_timestamp=0, log_append_time=None, count=1
    )
    assert [(h.key, h.value) for h in record.headers] == [
        ("key-" + "x" * 50, None),
        ("second", b"value"),
        ("third", b"3"),
    ]


# -- records built as another class, from a position on ----------------------------------------


@dataclass(frozen=True, slots=True)
class _Placed:
    """A stand-in for the consumer's record: a record's fields and two constant ones."""

    topic: str
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    partition: int


def _outcome_into(
    read: Callable[..., int], buf: bytes, start: int, **kwargs: Any
) -> tuple[str, object]:
    out: list[Any] = []
    into = {"cls": _Placed, "names": ("topic", "partition"), "values": ("t", 3)}
    kind, after = _read(read, buf, **kwargs, out=out, **into, start=start)
    if kind == "error":
        return kind, after
    assert all(type(placed) is _Placed for placed in out)
    return "records", (after, [dataclasses.astuple(placed) for placed in out])


@needs_accel
@THOROUGH
@given(
    section=records_sections(),
    base=bases,
    timestamp=bases,
    lat=log_append_times,
    start=st.integers(-5, 40) | bases,
)
def test_both_loops_agree_on_records_built_as_another_class(
    section: tuple[bytes, int], base: int, timestamp: int, lat: int | None, start: int
) -> None:
    buf, count = section
    kwargs = {"base_offset": base, "base_timestamp": timestamp, "log_append_time": lat}
    start = max(min(start, INT64[1]), INT64[0])
    compiled = _outcome_into(v2_records.read_records_into, buf, start, count=count, **kwargs)
    pure = _outcome_into(v2_records.read_records_into_pure, buf, start, count=count, **kwargs)
    assert compiled == pure


def test_records_built_as_another_class_skip_what_is_before_the_start() -> None:
    builder = RecordBatchBuilder()
    for i in range(5):
        builder.append(b"k%d" % i, b"v%d" % i, timestamp=100 + i)
    section = builder.build()[61:]
    for read in {v2_records.read_records_into, v2_records.read_records_into_pure}:
        out: list[Any] = []
        after = read(
            section,
            base_offset=10,
            base_timestamp=100,
            log_append_time=None,
            count=5,
            out=out,
            cls=_Placed,
            names=("topic", "partition"),
            values=("t", 3),
            start=12,
        )
        assert after == 15
        assert out == [
            _Placed("t", o, 90 + o, b"k%d" % (o - 10), b"v%d" % (o - 10), (), 3)
            for o in (12, 13, 14)
        ]
