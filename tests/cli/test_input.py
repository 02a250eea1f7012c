"""What ``produce`` reads: lines in linear time up to a limit, records from them, and the
refusals, each naming its line and field."""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import AsyncIterator

import pytest

from kafkawire.cli._input import (
    InputRecord,
    InvalidLine,
    json_record,
    numbered_records,
    text_record,
)
from kafkawire.cli._lines import LineReader


async def collect(lines: AsyncIterator[bytes]) -> list[bytes]:
    return [line async for line in lines]


async def test_lines_across_chunks_and_line_ends() -> None:
    long = b"x" * 200_000  # spans several 64 KiB chunks
    data = b"a\r\n" + long + b"\n\nb"
    assert await collect(LineReader(io.BytesIO(data), 1 << 20).lines()) == [
        b"a",
        long,
        b"",
        b"b",
    ]


async def test_a_line_past_the_limit_is_refused_with_its_number() -> None:
    data = b"short\n" + b"y" * 300_000 + b"\nnever read\n"
    records = numbered_records(LineReader(io.BytesIO(data), 100_000), InputRecord)
    first = await anext(records)
    assert first == (1, InputRecord(b"short"))
    with pytest.raises(InvalidLine, match=r"^line 2: longer than the limit of 100,000 bytes$"):
        await anext(records)


async def test_a_line_at_the_limit_is_read() -> None:
    data = b"z" * 70_000
    assert await collect(LineReader(io.BytesIO(data), 70_000).lines()) == [data]


async def test_an_interrupt_ends_the_lines_and_counts_what_was_not_given() -> None:
    data = b"one\r\ntwo\nthree\nfou"
    reader = LineReader(io.BytesIO(data), 100)
    lines = reader.lines()
    assert await anext(lines) == b"one"
    reader.interrupt()  # while "one" is being sent: the rest of the chunk is not given
    assert await collect(lines) == []
    assert reader.unsent == len(b"two\nthree\nfou")


async def test_an_interrupt_does_not_wait_for_a_read_that_waits_for_input() -> None:
    # A terminal, or a pipe whose writer is idle: the read blocks until the next line.
    # Before, the reads ran on asyncio's default executor, which asyncio.run waits for at
    # its end: Ctrl-C hung until the next line or the end of input.
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"one\ntw")
        with open(read_end, "rb", buffering=0, closefd=False) as stream:
            reader = LineReader(stream, 100)
            lines = reader.lines()
            assert await anext(lines) == b"one"
            waiting = asyncio.ensure_future(anext(lines, None))
            await asyncio.sleep(0)  # let it ask the thread, which blocks in read
            assert not waiting.done()
            reader.interrupt()
            assert await waiting is None
            assert reader.unsent == 2  # "tw", the unfinished line
    finally:
        os.close(write_end)  # ends the thread's read
        os.close(read_end)


async def test_a_bad_record_is_refused_with_its_number() -> None:
    data = b'{"value": "a"}\n{"value": 1}\n'
    records = numbered_records(
        LineReader(io.BytesIO(data), 1000), lambda line: json_record(line, ())
    )
    assert (await anext(records))[0] == 1
    with pytest.raises(InvalidLine, match=r"^line 2: value must be a string"):
        await anext(records)


def test_what_consume_writes_is_read_back() -> None:
    written = {
        "topic": "a",
        "partition": 1,
        "offset": 17,
        "timestamp": 1795454546268,
        "key": "k1",
        "value": {"base64": "/w=="},
        "headers": [["source", "cli"], ["raw", {"base64": "AA=="}], ["none", None]],
    }
    record = json_record(json.dumps(written).encode(), [("extra", b"1")])
    assert record == InputRecord(
        value=b"\xff",
        key=b"k1",
        headers=[("extra", b"1"), ("source", b"cli"), ("raw", b"\x00"), ("none", None)],
        partition=1,
        timestamp=1795454546268,
    )


def test_headers_as_an_object() -> None:
    assert json_record(b'{"value": null, "headers": {"h": "v"}}', ()).headers == [("h", b"v")]


@pytest.mark.parametrize(
    ("line", "refusal"),
    [
        (b'{"value": "a", "headers": ["ab"]}', 'headers[0] is not a [key, value] pair: "ab"'),
        (b'{"value": "a", "headers": [["k"]]}', 'headers[0] is not a [key, value] pair: ["k"]'),
        (b'{"value": "a", "headers": [[1, "v"]]}', "a header key must be a string, not 1"),
        (b'{"value": "a", "headers": "h"}', "headers must be a list of [key, value] pairs"),
        (b'{"value": "a", "headers": {"h": 2}}', "header 'h' must be a string"),
        (b'{"value": "a", "partition": true}', "partition must be a whole number >= 0"),
        (b'{"value": "a", "partition": -1}', "partition must be a whole number >= 0"),
        (b'{"value": "a", "partition": 1.5}', "partition must be a whole number >= 0"),
        (b'{"value": "a", "timestamp": "now"}', "timestamp must be a whole number >= 0"),
        (b'{"value": "a", "valeu": "b"}', "unknown field 'valeu'"),
        (b'{"value": {"base64": "!"}}', "value: bad base64"),
        (b'{"key": [1]}', "key must be a string"),
        (b"[1, 2]", "not a JSON object but [1, 2]"),
        (b"{", "not JSON: "),
        # Lines Python cannot take: each raised a bare UnicodeError, RecursionError or the
        # producer's ValueError (no line number, no count of the records written before it).
        (b'{"value": "\xff"}', "not UTF-8: byte 12 of the line is 0xff"),
        (b'{"value": "\\ud800"}', "value: a lone surrogate (\\ud800) is not text"),
        (b'{"value": "a", "headers": {"\\udc00": "v"}}', "header key: a lone surrogate"),
        (b"[" * 100_000, "not JSON: nested too deeply"),
        (b'{"value": "a", "timestamp": 9223372036854775808}', "timestamp must be at most"),
        (b'{"value": "a", "partition": 2147483648}', "partition must be at most 2,147,483,647"),
    ],
)
def test_malformed_records_are_refused(line: bytes, refusal: str) -> None:
    with pytest.raises(InvalidLine) as refused:
        json_record(line, ())
    assert str(refused.value).startswith(refusal)


def test_text_lines_with_a_key_separator() -> None:
    assert text_record(b"k:v:w", b":", ()) == InputRecord(b"v:w", b"k")
    with pytest.raises(InvalidLine, match="no key separator ':'"):
        text_record(b"kv", b":", ())
