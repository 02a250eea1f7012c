"""The protocol's primitive encodings that are not a single ``struct`` format.

Unsigned varints (compact lengths and tagged-field headers) and zigzag varints/varlongs.
Fixed-width integers, floats and bools are ``struct`` formats, listed in ``FIXED_FORMATS``.
"""

from __future__ import annotations

# Kafka type -> big-endian struct format character.
FIXED_FORMATS = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
}

# The values each integer type holds, both ends included.
INTEGER_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "varint": (-(2**31), 2**31 - 1),
    "varlong": (-(2**63), 2**63 - 1),
}

# An unsigned varint of a 32-bit value takes at most 5 bytes, a 64-bit one at most 10.
_MAX_UVARINT32_BYTES = 5
_MAX_UVARINT64_BYTES = 10


def read_uvarint(buf: bytes, pos: int, max_bytes: int = _MAX_UVARINT32_BYTES) -> tuple[int, int]:
    """Decode an unsigned varint at ``pos``; return it and the position after it.

    Raises ``ValueError`` for a varint longer than ``max_bytes`` and ``IndexError`` when the
    buffer ends inside it.
    """
    value = shift = 0
    for i in range(max_bytes):
        byte = buf[pos + i]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + i + 1
        shift += 7
    raise ValueError(f"varint longer than {max_bytes} bytes")


def uvarint(value: int) -> bytes:
    """Encode a non-negative int as an unsigned varint."""
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode a zigzag varint (int32)."""
    raw, pos = read_uvarint(buf, pos, _MAX_UVARINT32_BYTES)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode a zigzag varlong (int64)."""
    raw, pos = read_uvarint(buf, pos, _MAX_UVARINT64_BYTES)
    return (raw >> 1) ^ -(raw & 1), pos


def varint(value: int) -> bytes:
    """Encode an int32 as a zigzag varint."""
    if not -(1 << 31) <= value < (1 << 31):
        raise OverflowError(f"varint cannot hold {value}")
    return uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def varlong(value: int) -> bytes:
    """Encode an int64 as a zigzag varlong."""
    if not -(1 << 63) <= value < (1 << 63):
        raise OverflowError(f"varlong cannot hold {value}")
    return uvarint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)
