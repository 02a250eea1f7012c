"""Turning a capture into the bytes it holds: raw binary, plain hex, or a hex dump.

A Kafka frame starts with its size, whose first byte is zero for any frame under 16 MiB, so a
capture that is all printable text is a text form and anything else is raw bytes. The dumps
read are those of ``xxd``, ``hexdump -C`` and netcat (``nc -x``/``-o``: a ``<``/``>`` direction
marker, an offset, bytes, ``#`` and the text). Each of them ends a line with its bytes shown as
text, so which tokens are bytes is decided by where that text column starts, never by whether a
token looks like hex: the text "ab" is not the byte 0xab.

A ``*`` line of ``hexdump -C`` stands for as many repeats of the line before as the next
offset says, so a few lines can ask for any size (a 150-byte dump asked for 1 GiB): what the
``*`` lines of a dump stand for is bounded (:data:`MAX_REPEATED` bytes in all), and a dump
that asks for more is read up to that ``*``, saying where and why it was cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_REPEATED", "Capture", "CaptureError", "parse_hex", "read_capture"]

MAX_REPEATED = 64 * 1024 * 1024
"""The most bytes the ``*`` lines of one hex dump may stand for together: 64 MiB, more than a
frame holds by default (a Fetch response is at most 50 MiB by Kafka's defaults)."""

_PRINTABLE = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}
_PLAIN_HEX = re.compile(r"[0-9a-fA-F\s]*")
# Optional direction marker, then the offset: "00000010:" (xxd), "00000010" (hexdump -C,
# netcat), or "[0010]".
_LINE = re.compile(r"\s*(?:[<>]\s+)?\[?(?P<offset>[0-9a-fA-F]{4,})\]?(?P<colon>:?)(?=\s|$)")
_TOKEN = re.compile(r"\S+")
_BYTE = re.compile(r"(?:[0-9a-fA-F]{2})+")
_LINE_BYTES = 16  # what every one of these tools writes per line by default


class CaptureError(ValueError):
    """Input that is neither raw frames, nor hex, nor a hex dump this command reads."""


@dataclass(frozen=True, slots=True)
class Capture:
    data: bytes
    cut: str | None = None
    """Why ``data`` ends before the input does (a hex dump that repeats too much), if it does."""


def read_capture(data: bytes) -> Capture:
    """The captured bytes in ``data``, whichever of the supported forms it takes."""
    if not set(data) <= _PRINTABLE:
        return Capture(data)
    text = data.decode("ascii")
    if _PLAIN_HEX.fullmatch(text):
        return Capture(parse_hex(text))
    return _parse_dump(text)


def parse_hex(text: str) -> bytes:
    digits = "".join(text.split())
    if len(digits) % 2:
        raise CaptureError(f"odd number of hex digits ({len(digits)})")
    try:
        return bytes.fromhex(digits)
    except ValueError:
        raise CaptureError("not hex: use only 0-9, a-f and whitespace") from None


def _parse_dump(text: str) -> Capture:
    out = bytearray()
    base: int | None = None
    repeated: bytes | None = None  # the line before a "*" of hexdump -C
    repeats = 0  # the bytes "*" lines stood for so far
    text_column: int | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.strip() == "*":
            repeated = _last_line(out)
            continue
        match = _LINE.match(line)
        if match is None:
            raise CaptureError(f"line {number} is not a hex dump line: {line.strip()[:60]!r}")
        offset = int(match["offset"], 16)
        base = offset if base is None else base
        if repeated:
            missing = max(offset - base - len(out), 0)
            repeats += missing
            if repeats > MAX_REPEATED:
                return Capture(bytes(out), _too_repetitive(number, offset, missing, len(out)))
            out += (repeated * (missing // len(repeated) + 1))[:missing]
            repeated = None
        rest = line[match.end() :].split("|", 1)[0].split(" #", 1)[0]
        if match["colon"]:  # xxd: single spaces between groups, two before the text
            rest = rest.lstrip().split("  ", 1)[0]
        found, column = _line_bytes(rest, text_column)
        text_column = text_column if column is None else column
        out += found
    return Capture(bytes(out))


def _too_repetitive(number: int, offset: int, missing: int, read: int) -> str:
    return (
        f"the '*' before line {number} (offset {offset:#x}) stands for {missing:,} bytes,"
        f" past the {MAX_REPEATED:,} bytes the '*' lines of a dump may stand for;"
        f" the capture was read up to byte {read:,}"
    )


def _line_bytes(rest: str, text_column: int | None) -> tuple[bytes, int | None]:
    """The bytes of one line's hex part, and where its text column starts if this line shows.

    Until a full line has shown where the text column starts, a gap of three or more spaces
    after the bytes is taken as the padding before it.
    """
    found = bytearray()
    previous_end = 0
    for token in _TOKEN.finditer(rest):
        full = len(found) >= _LINE_BYTES
        if full or (text_column is not None and token.start() >= text_column):
            return bytes(found), token.start() if full else None
        if not _BYTE.fullmatch(token[0]):
            break
        if text_column is None and found and token.start() - previous_end >= 3:
            break
        found += bytes.fromhex(token[0])
        previous_end = token.end()
    return bytes(found), None


def _last_line(out: bytearray) -> bytes:
    return bytes(out[-_LINE_BYTES:])
