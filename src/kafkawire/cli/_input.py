"""Records from lines of input: plain lines (with an optional key) or JSON objects.

JSON records use the encoding ``consume --format json`` writes, so its output can be produced
again: ``key`` and ``value`` are strings (written as UTF-8), ``{"base64": "..."}`` or null;
``headers`` is a list of ``[key, value]`` pairs or an object; ``partition`` is optional.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

__all__ = ["Header", "InputRecord", "InvalidLine", "json_record", "read_lines", "text_record"]

_CHUNK = 1 << 16
Header = tuple[str, bytes | None]


class InvalidLine(ValueError):
    """A line of input that does not say what record to produce."""


@dataclass(frozen=True, slots=True)
class InputRecord:
    value: bytes | None
    key: bytes | None = None
    headers: Sequence[Header] = ()
    partition: int | None = None


async def read_lines(stream: BinaryIO) -> AsyncIterator[bytes]:
    """The lines of ``stream`` without their line ends, read off the event loop.

    Reading in a thread, a chunk at a time, keeps the producer sending while input is slow (a
    person typing) and costs one thread hop per 64 KiB when it is fast.
    """
    pending = b""
    read = getattr(stream, "read1", stream.read)
    while chunk := await asyncio.to_thread(read, _CHUNK):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            yield line.removesuffix(b"\r")
    if pending:
        yield pending.removesuffix(b"\r")


def text_record(
    line: bytes, key_separator: bytes | None, headers: list[tuple[str, bytes | None]]
) -> InputRecord:
    if key_separator is None:
        return InputRecord(line, headers=headers)
    key, sep, value = line.partition(key_separator)
    if not sep:
        raise InvalidLine(f"no key separator {key_separator.decode()!r} in the line")
    return InputRecord(value, key, headers)


def json_record(line: bytes, headers: Sequence[Header]) -> InputRecord:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidLine(f"not JSON: {exc}") from None
    if not isinstance(obj, dict) or not obj.keys() <= {"key", "value", "headers", "partition"}:
        raise InvalidLine("not an object with only key, value, headers and partition")
    given = obj.get("headers") or []
    pairs = given.items() if isinstance(given, dict) else given
    partition = obj.get("partition")
    if partition is not None and (not isinstance(partition, int) or partition < 0):
        raise InvalidLine(f"partition {partition!r} is not a partition number")
    return InputRecord(
        _bytes(obj.get("value"), "value"),
        _bytes(obj.get("key"), "key"),
        [*headers, *((str(k), _bytes(v, f"header {k}")) for k, v in pairs)],
        partition,
    )


def _bytes(value: Any, what: str) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, dict) and value.keys() == {"base64"}:
        try:
            return base64.b64decode(value["base64"], validate=True)
        except (binascii.Error, TypeError):
            raise InvalidLine(f"{what}: bad base64") from None
    raise InvalidLine(f'{what} must be a string, {{"base64": ...}} or null, not {value!r}')
