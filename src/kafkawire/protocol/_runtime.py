"""What compiled codecs call at run time: precompiled array structs, fast UUIDs, reasons."""

from __future__ import annotations

import functools
import struct
import uuid

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
