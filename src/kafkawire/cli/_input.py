"""Records from lines of input: plain lines (with an optional key) or JSON objects.

JSON records use the encoding ``consume --format json`` writes, so its output can be produced
again: ``key`` and ``value`` are strings (written as UTF-8), ``{"base64": "..."}`` or null;
``headers`` is a list of ``[key, value]`` pairs or an object; ``partition`` and ``timestamp``
(ms since the epoch) are optional; ``topic`` and ``offset``, which ``consume`` writes, are
read and ignored (the record goes to the command's topic, and the broker gives the offset).

Every refusal names the line, and the field within it (the lines come from ``_lines.py``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ._lines import InvalidLine, LineReader

__all__ = [
    "Header",
    "InputRecord",
    "InvalidLine",
    "json_record",
    "numbered_records",
    "text_record",
]

Header = tuple[str, bytes | None]
# What the wire can carry: a partition is an int32, a timestamp an int64.
_MAX_PARTITION = 2**31 - 1
_MAX_TIMESTAMP = 2**63 - 1
_FIELDS = frozenset({"key", "value", "headers", "partition", "timestamp", "topic", "offset"})


@dataclass(frozen=True, slots=True)
class InputRecord:
    value: bytes | None
    key: bytes | None = None
    headers: Sequence[Header] = ()
    partition: int | None = None
    timestamp: int | None = None


async def numbered_records(
    reader: LineReader, parse: Callable[[bytes], InputRecord]
) -> AsyncGenerator[tuple[int, InputRecord]]:
    """Each line's number (from 1) and record; a line that makes none raises
    :class:`InvalidLine` with its number."""
    number = 1
    try:
        async for line in reader.lines():
            yield number, parse(line)
            number += 1
    except InvalidLine as exc:
        raise InvalidLine(f"line {number}: {exc}") from None


def text_record(line: bytes, key_separator: bytes | None, headers: Sequence[Header]) -> InputRecord:
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
    except UnicodeDecodeError as exc:  # JSON is UTF-8 text (RFC 8259)
        raise InvalidLine(
            f"not UTF-8: byte {exc.start + 1} of the line is {line[exc.start]:#04x}"
        ) from None
    except RecursionError:
        raise InvalidLine("not JSON: nested too deeply") from None
    if not isinstance(obj, dict):
        raise InvalidLine(f"not a JSON object but {_shown(obj)}")
    unknown = sorted(obj.keys() - _FIELDS)
    if unknown:
        raise InvalidLine(
            f"unknown field {unknown[0]!r}; a record has {', '.join(sorted(_FIELDS))}"
        )
    return InputRecord(
        _bytes(obj.get("value"), "value"),
        _bytes(obj.get("key"), "key"),
        [*headers, *_headers(obj.get("headers"))],
        _whole_number(obj.get("partition"), "partition", _MAX_PARTITION),
        _whole_number(obj.get("timestamp"), "timestamp", _MAX_TIMESTAMP),
    )


def _headers(given: Any) -> list[Header]:
    if given is None:
        return []
    if isinstance(given, dict):
        pairs = list(given.items())
    elif isinstance(given, list):
        pairs = []
        for index, pair in enumerate(given):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise InvalidLine(f"headers[{index}] is not a [key, value] pair: {_shown(pair)}")
            pairs.append((pair[0], pair[1]))
    else:
        raise InvalidLine(
            f"headers must be a list of [key, value] pairs or an object, not {_shown(given)}"
        )
    out = []
    for key, value in pairs:
        if not isinstance(key, str):
            raise InvalidLine(f"a header key must be a string, not {_shown(key)}")
        _utf8(key, "header key")
        out.append((key, _bytes(value, f"header {key!r}")))
    return out


def _whole_number(value: Any, what: str, maximum: int) -> int | None:
    # bool is an int to Python: true must not read as 1.
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        if value is not None and value > maximum:
            raise InvalidLine(f"{what} must be at most {maximum:,}, not {value}")
        return value
    raise InvalidLine(f"{what} must be a whole number >= 0 or null, not {_shown(value)}")


def _bytes(value: Any, what: str) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return _utf8(value, what)
    if isinstance(value, dict) and value.keys() == {"base64"}:
        try:
            return base64.b64decode(value["base64"], validate=True)
        except (TypeError, ValueError):  # binascii.Error is a ValueError
            raise InvalidLine(f"{what}: bad base64") from None
    raise InvalidLine(f'{what} must be a string, {{"base64": ...}} or null, not {_shown(value)}')


def _utf8(text: str, what: str) -> bytes:
    """``text`` as UTF-8: JSON's \\uXXXX escapes can write half of a surrogate pair, which no
    UTF-8 holds."""
    try:
        return text.encode()
    except UnicodeEncodeError as exc:
        half = ord(text[exc.start])
        raise InvalidLine(f"{what}: a lone surrogate (\\u{half:04x}) is not text") from None


def _shown(value: Any) -> str:
    """``value`` as the JSON it was, cut short: a refusal stays one readable line."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
