"""What compiled codecs call at run time: precompiled array structs, fast UUIDs, reasons."""

from __future__ import annotations

import functools
import struct
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from kafkawire.errors import EncodeError

from .primitives import INTEGER_RANGES

SMALL_ARRAY = 64


class ArrayStructs:
    """``struct.Struct`` objects for ``n`` values of one format: precompiled for short arrays.

    Formatting ``">%di" % n`` and finding it in ``struct``'s own cache costs three times as much
    as indexing a list of compiled Structs, and most arrays (replica lists) are short.
    """

    def __init__(self, fixed: str) -> None:
        self.fixed = fixed
        self.small = [struct.Struct(f">{n}{fixed}") for n in range(SMALL_ARRAY)]

    def large(self, n: int) -> struct.Struct:
        return struct.Struct(f">{n}{self.fixed}")


@functools.cache
def array_structs(fixed: str) -> ArrayStructs:
    return ArrayStructs(fixed)


_new_object = object.__new__
_set_uuid_int = uuid.UUID.__dict__["int"].__set__
_set_uuid_safe = uuid.UUID.__dict__["is_safe"].__set__


def uuid_from_bytes(data: bytes) -> uuid.UUID:
    """``uuid.UUID(bytes=data)`` for exactly 16 bytes, at a third of the cost.

    ``UUID.__init__`` validates its arguments in Python; the decoder has already checked the
    length, so the two slots are set directly (the result is equal and hashes the same).
    """
    value: uuid.UUID = _new_object(uuid.UUID)
    _set_uuid_int(value, int.from_bytes(data))
    _set_uuid_safe(value, uuid.SafeUUID.unknown)
    return value


def reason(exc: BaseException) -> str:
    if isinstance(exc, IndexError) or "requires a buffer" in str(exc):
        return "input ends inside the field"
    return str(exc)


def check_unknown_tags(tags: tuple[tuple[int, bytes], ...], known: frozenset[int]) -> None:
    """Refuse unknown tagged fields that reuse a known tag or are not in ascending tag order.

    Kafka writes tagged fields in ascending tag order, each once, and its Java writer
    (``RawTaggedFieldWriter``) refuses raw tags that are not sorted that way. Sorting them here
    instead would decode to a message unequal to the one given.
    """
    previous = -1
    for tag, _ in tags:
        if tag in known:
            raise ValueError(f"unknown tagged field {tag} is a known tag")
        if tag <= previous:
            raise ValueError(
                f"unknown tagged field {tag} comes after tag {previous}: give unknown tagged "
                "fields in ascending tag order, each tag once"
            )
        previous = tag


@dataclass(frozen=True, slots=True)
class FixedSpot:
    """A fixed-width field as one encoder statement writes it (alone, in a run, or as an array).

    ``at`` is where it starts, in bytes from the start of the statement's output.
    """

    name: str
    kafka_type: str
    is_array: bool
    at: int
    width: int


def encode_failure(
    label: str,
    offset: int,
    exc: Exception,
    obj: object,
    *,
    cls_name: str,
    spots: Mapping[str, tuple[FixedSpot, ...]],
) -> EncodeError:
    """The error for a failure while writing the field(s) ``label`` of ``obj`` at ``offset``.

    Adjacent fixed-width fields are packed by one ``struct.Struct`` whose error names neither
    the field nor its type; this finds the one value at fault (an array element by index) and
    says in words what its type allows.
    """
    for spot in spots.get(label, ()):
        value = getattr(obj, spot.name)
        if not spot.is_array:
            problem = fixed_problem(spot.kafka_type, value)
            if problem is not None:
                return EncodeError(cls_name, spot.name, offset + spot.at, problem)
        elif isinstance(value, tuple | list):
            for idx, item in enumerate(value):
                problem = fixed_problem(spot.kafka_type, item)
                if problem is not None:
                    path = f"{spot.name}[{idx}]"
                    return EncodeError(cls_name, path, offset + idx * spot.width, problem)
    return EncodeError(cls_name, label, offset, reason(exc))


def fixed_problem(kafka_type: str, value: object) -> str | None:
    """Why ``value`` cannot be written as the fixed-width ``kafka_type``; None if it can."""
    if kafka_type == "bool":
        return None  # written as its truth value, as struct's "?" does
    if kafka_type == "float64":
        if not isinstance(value, int | float):
            return f"{value!r} is not a number, as float64 needs"
        try:
            float(value)
        except OverflowError:
            return f"{value} is out of range for float64"
        return None
    low, high = INTEGER_RANGES[kafka_type]
    if not isinstance(value, int):
        return f"{value!r} is not an integer, as {kafka_type} needs"
    if not low <= value <= high:
        return f"{value} is out of range for {kafka_type} ({low}..{high})"
    return None
