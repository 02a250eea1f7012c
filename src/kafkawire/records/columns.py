"""Columns of keys, values and timestamps, for appending many records in one call.

A column is what :func:`column` (byte strings) or :func:`timestamp_column` (ints) makes of
a list or tuple, any other sequence, an Arrow array (``pyarrow``: binary, large_binary,
string or large_string; int64 or timestamp[ms] for timestamps; a ChunkedArray is combined
first) or ``None``: a pair ``(kind, payload)`` that the compiled record appender reads
without a Python object per record (an Arrow array's buffers are read in place):

- ``(NONE, None)``: every item is ``None`` (no keys; no timestamps: one for all);
- ``(SEQUENCE, list or tuple)``: each item ``bytes`` or ``None`` (ints for timestamps);
- ``(ARROW, (validity, offsets, data, offset, length, wide))`` for byte strings, ``(ARROW,
  (values, offset, length))`` for timestamps: the array's buffers (validity ``None`` when
  it has no nulls), its offset and length in them, and whether its offsets are int64.

``src/kafkawire/_columns.h`` reads them in C; :func:`items` and :func:`timestamp_items` read
them in Python, for the pure-Python twins. pyarrow is never imported here: an Arrow array is
known by its methods.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "ARROW",
    "NONE",
    "SEQUENCE",
    "ColumnSpec",
    "column",
    "items",
    "length",
    "timestamp_column",
    "timestamp_items",
]

NONE, SEQUENCE, ARROW = 0, 1, 2
ColumnSpec = tuple[int, Any]
_BINARY = {"binary": False, "string": False, "large_binary": True, "large_string": True}
_TIMESTAMPS = ("int64", "timestamp[ms]")
_EMPTY = bytes(8)  # an empty array's missing buffers: a zero offset or two


def _arrow_array(data: object) -> Any:
    """``data`` as one Arrow array if it is an Arrow array (or chunked array), else None."""
    if hasattr(data, "combine_chunks") and hasattr(data, "num_chunks"):
        data = data.combine_chunks()
    if hasattr(data, "buffers") and hasattr(data, "type") and hasattr(data, "offset"):
        return data
    return None


def column(data: object, what: str) -> ColumnSpec:
    """``data`` (byte strings or ``None``, see the module doc) as a column; ``what`` names it
    in errors. Items are checked as they are read."""

    def arrow(array: Any) -> tuple[Any, ...]:
        kind = str(array.type)
        if kind not in _BINARY:
            raise TypeError(f"{what} must be an Arrow binary or string array, not {kind}")
        validity, offsets, values = array.buffers()[:3]
        return (
            validity if array.null_count else None,
            _EMPTY if offsets is None else offsets,
            b"" if values is None else values,
            array.offset,
            len(array),
            _BINARY[kind],
        )

    return _spec(
        data,
        arrow,
        f"{what} must be a sequence of bytes or None, or an Arrow binary or string array",
    )


def timestamp_column(data: object) -> ColumnSpec:
    """Timestamps (ints of milliseconds since the epoch, or ``None``: one for all) as a
    column."""

    def arrow(array: Any) -> tuple[Any, ...]:
        kind = str(array.type)
        if kind not in _TIMESTAMPS:
            raise TypeError(f"timestamps must be an Arrow int64 or timestamp[ms] array, not {kind}")
        if array.null_count:
            raise TypeError("timestamps must not be null")
        values = array.buffers()[1]
        return _EMPTY if values is None else values, array.offset, len(array)

    return _spec(data, arrow, "timestamps must be a sequence of ints")


def _spec(data: object, arrow: Callable[[Any], tuple[Any, ...]], refusal: str) -> ColumnSpec:
    """The column of ``data``: none, a list or tuple as it is, an Arrow array's buffers (by
    ``arrow``), any other sequence as a list; else ``TypeError(refusal)``."""
    if data is None:
        return NONE, None
    if isinstance(data, list | tuple):
        return SEQUENCE, data
    array = _arrow_array(data)
    if array is not None:
        return ARROW, arrow(array)
    if isinstance(data, Sequence) and not isinstance(data, str | bytes | bytearray):
        return SEQUENCE, list(data)
    raise TypeError(f"{refusal}, not {type(data).__name__}")


def length(spec: ColumnSpec) -> int:
    """How many items a column holds (0 for NONE: it takes any length)."""
    kind, payload = spec
    if kind == SEQUENCE:
        return len(payload)
    return payload[4] if kind == ARROW else 0


def items(spec: ColumnSpec, count: int) -> Sequence[bytes | None]:
    """A column's items as Python values (``count``: a NONE column's)."""
    kind, payload = spec
    if kind == NONE:
        return [None] * count
    if kind == SEQUENCE:
        return payload  # type: ignore[no-any-return]
    validity, offsets, data, offset, count, wide = payload
    width = "q" if wide else "i"
    bounds = struct.unpack_from(f"={count + 1}{width}", offsets, offset * (8 if wide else 4))
    data = bytes(data)
    bits = None if validity is None else bytes(validity)
    out: list[bytes | None] = []
    for index in range(count):
        at = offset + index
        if bits is not None and not (bits[at >> 3] >> (at & 7)) & 1:
            out.append(None)
        else:
            out.append(data[bounds[index] : bounds[index + 1]])
    return out


def timestamp_items(spec: ColumnSpec) -> Sequence[int] | None:
    """A timestamp column's ints, or None for one timestamp for all."""
    kind, payload = spec
    if kind == NONE:
        return None
    if kind == SEQUENCE:
        return payload  # type: ignore[no-any-return]
    values, offset, count = payload
    return struct.unpack_from(f"={count}q", values, offset * 8)
