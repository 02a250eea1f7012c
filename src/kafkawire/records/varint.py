"""Zigzag varints, the integer encoding inside v2 records.

A record's length, offset delta, key/value/header lengths and header count are ``varint``
(int32, at most 5 bytes); its timestamp delta is a ``varlong`` (int64, at most 10 bytes). Both
are zigzag-encoded (``0, -1, 1, -2`` -> ``0, 1, 2, 3``) and then written 7 bits a byte, least
significant group first, with the high bit set on every byte but the last.

This is its own codec on purpose: ``kafkawire.protocol`` has the *unsigned* varints of compact
lengths, and the records layer does not import the protocol layer. The record decoder inlines
the one- to three-byte forms and calls :func:`read_raw` for the rest; the builder looks the
one- and two-byte forms up in :func:`small_varints` and calls :func:`encode_varint` for the
rest.
"""

from __future__ import annotations

import functools

from .errors import CorruptRecordError, InvalidRecordError
from .model import BytesLike

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "SMALL_VARINT_LIMIT",
    "encode_varint",
    "read_raw",
    "read_varint",
    "small_varints",
]

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
"""The bounds of Kafka's int64 (offsets, timestamps, varlongs)."""
SMALL_VARINT_LIMIT = 1 << 14
"""Zigzag forms below this take one or two bytes and are in :func:`small_varints`."""


def read_raw(buf: BytesLike, pos: int, bits: int) -> tuple[int, int]:
    """The unsigned (still zigzag-encoded) varint of at most ``bits`` bits at ``pos``.

    Returns it and the position after it. Raises :class:`CorruptRecordError` for a varint
    longer than ``bits`` needs (5 bytes for 32, 10 for 64), one whose value does not fit in
    ``bits``, or one that the buffer ends inside.
    """
    raw = shift = 0
    try:
        for i in range((bits + 6) // 7):
            byte = buf[pos + i]
            raw |= (byte & 0x7F) << shift
            if byte < 0x80:
                if raw >> bits:
                    raise CorruptRecordError(f"varint at byte {pos} overflows {bits} bits")
                return raw, pos + i + 1
            shift += 7
    except IndexError:
        raise CorruptRecordError(f"varint at byte {pos} runs past the end") from None
    raise CorruptRecordError(f"varint at byte {pos} is longer than {bits} bits allow")


def read_varint(buf: BytesLike, pos: int) -> tuple[int, int]:
    """Decode the zigzag varint (int32) at ``pos``; return it and the position after it."""
    raw, pos = read_raw(buf, pos, 32)
    return (raw >> 1) ^ -(raw & 1), pos


def encode_varint(value: int) -> bytes:
    """Encode an int64 as a zigzag varint (the same bytes serve varint and varlong).

    Raises :class:`InvalidRecordError` for a value outside int64.
    """
    if not INT64_MIN <= value <= INT64_MAX:
        raise InvalidRecordError(f"{value} does not fit in a varlong")
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


@functools.cache
def small_varints() -> tuple[bytes, ...]:
    """Every one- and two-byte zigzag varint, indexed by its zigzag form (``< 2**14``).

    Built on first use (16384 short ``bytes``, about 0.7 MB): a lookup here costs a fraction
    of a call to :func:`encode_varint`, and a record has four or five varints, almost always
    small ones (lengths under 8 KiB, deltas under 8192).
    """
    one = [bytes((raw,)) for raw in range(0x80)]
    two = [bytes((raw & 0x7F | 0x80, raw >> 7)) for raw in range(0x80, SMALL_VARINT_LIMIT)]
    return (*one, *two)
