"""The compiled decoders of ``kafkawire.protocol._accel``, built from the codecs' field plans.

The extension is optional (see ``hatch_build.py``): :data:`ACCELERATED` says whether it is in
use, that is built and not disabled with ``KAFKAWIRE_NO_EXTENSIONS``. When it is,
:func:`compiled_decoder` turns a class's planned fields into the extension's op tuples, once
per class, and returns a ``Decoder``: a callable with the pure ``decode_from``'s signature that
interprets them, and on any failure calls the pure decoder (its ``fallback``) instead, which
raises the exact :class:`~kafkawire.errors.DecodeError`.

A class falls back to its pure decoder alone (``compiled_decoder`` returns ``None``) when the
extension refuses its layout (a ``__weakref__`` slot, say; generated classes never have one)
or when a struct it nests has no compiled decoder.

One difference no comparison of values sees: a records field inside a *tagged* field (no
schema has one) is a view of the frame, where the pure decoder's is a view of a copy.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from kafkawire._extensions import load_optional

from ._fields import PlannedField, element_width

__all__ = ["ACCELERATED", "PLAN_VERSION", "compiled_decoder"]

# Bumped with _accel.c's, so that a stale build warns (2: bases that hold nothing are taken).
PLAN_VERSION = 2
# The extension's kinds, in its order (``enum kind`` in _accel.c).
KINDS = {
    name: index
    for index, name in enumerate(
        (
            *("bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64"),
            *("string", "bytes", "records", "uuid", "varint", "varlong", "struct"),
        )
    )
}
ARRAY, NULLABLE, COMPACT = 1, 2, 4

DecodeFrom = Callable[..., tuple[Any, int]]


def _load() -> type[Any]:
    from . import _accel

    _accel.setup(uuid.UUID, uuid.SafeUUID.unknown, PLAN_VERSION)
    return _accel.Decoder


_DECODER = load_optional("kafkawire.protocol._accel", _load)
ACCELERATED = _DECODER is not None
"""Whether codecs decode with the compiled decoders."""


def compiled_decoder(
    cls: type[Any],
    fields: Sequence[PlannedField],
    flexible: bool,
    *,
    holds_records: bool,
    pure: DecodeFrom,
    nested: Callable[[type[Any]], object],
) -> DecodeFrom | None:
    """The compiled ``decode_from`` of ``cls``, or ``None`` (see the module's docstring).

    ``nested`` gives the chosen ``decode_from`` of a struct class.
    """
    if _DECODER is None:
        return None
    ops: list[tuple[Any, ...]] = []
    tagged: list[tuple[Any, ...]] = []
    for f in fields:
        struct_decoder = None
        if f.struct is not None:
            struct_decoder = nested(f.struct)
            if not isinstance(struct_decoder, _DECODER):
                return None
        flags = (ARRAY * f.is_array) | (NULLABLE * f.nullable) | (COMPACT * f.compact)
        width = element_width(f) if f.is_array else 0
        op = (f.name, KINDS[f.element], flags, width, struct_decoder)
        if f.tag is None:
            ops.append(op)
        else:
            tagged.append((*op, f.tag, f.default))
    tagged.sort(key=lambda op: int(op[5]))
    try:
        decoder: DecodeFrom = _DECODER(
            cls, tuple(ops), tuple(tagged), flexible, holds_records, pure
        )
    except TypeError:
        return None
    return decoder
