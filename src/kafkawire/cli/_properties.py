"""Java's ``.properties`` format, as Kafka's console tools read ``--command-config FILE``.

What ``java.util.Properties.load`` takes: ``key=value``, ``key: value`` or ``key value``;
comments starting with ``#`` or ``!``; a line ending in an odd number of backslashes goes on
on the next line (whose leading blanks are dropped); escapes ``\\t \\n \\r \\f \\uXXXX``, and a
backslash before any other character stands for that character (``\\=``, ``\\:``, ``\\ ``).
A later key replaces an earlier one.
"""

from __future__ import annotations

__all__ = ["parse_properties"]

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_BLANKS = " \t\f"


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Each logical line with the number of its first physical line (1-based)."""
    lines: list[tuple[int, str]] = []
    pending: str | None = None
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.lstrip(_BLANKS)
        if pending is None:
            if not line or line[0] in "#!":
                continue
            pending, start = "", number
        pending += line
        trailing = len(pending) - len(pending.rstrip("\\"))
        if trailing % 2:
            pending = pending[:-1]  # the backslash that joins the next line
            continue
        lines.append((start, pending))
        pending = None
    if pending is not None:
        lines.append((start, pending))
    return lines


def _unescape(text: str, where: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 >= len(text):
            out.append(char)
            i += 1
            continue
        escaped = text[i + 1]
        if escaped == "u":
            digits = text[i + 2 : i + 6]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise ValueError(f"{where}: a \\u escape needs four hex digits")
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(escaped, escaped))
        i += 2
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    """The key (up to the first unescaped ``=``, ``:`` or blank) and the value after it."""
    i = 0
    while i < len(line) and line[i] not in "=:" + _BLANKS:
        i += 2 if line[i] == "\\" else 1
    key, rest = line[:i], line[i:].lstrip(_BLANKS)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_BLANKS)
    return key, rest


def parse_properties(text: str, source: str) -> dict[str, str]:
    """The keys and values of ``text``; ``source`` (the file) names a bad line in a
    ``ValueError``, by number only: a value may be a secret."""
    properties: dict[str, str] = {}
    for number, line in _logical_lines(text):
        key, value = _split(line)
        where = f"{source}, line {number}"
        properties[_unescape(key, where)] = _unescape(value, where)
    return properties
