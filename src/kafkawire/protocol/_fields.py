"""Reading generated dataclass fields: what each is on the wire, its struct class, its default."""

from __future__ import annotations

import dataclasses
import struct
import typing
from dataclasses import dataclass
from typing import Any

from .primitives import FIXED_FORMATS

TAGGED_FIELDS = "tagged_fields"
SCALARS = frozenset({"string", "bytes", "records", "uuid"})
VARINT_TYPES = frozenset({"varint", "varlong"})


def struct_of(annotation: Any) -> type[Any] | None:
    """The dataclass in ``X``, ``X | None``, ``tuple[X, ...]`` or ``tuple[X, ...] | None``."""
    stack = [annotation]
    while stack:
        item = stack.pop()
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            return item
        stack.extend(typing.get_args(item))
    return None


def default_of(f: dataclasses.Field[Any]) -> Any:
    """A field's default value; a factory's product is shared, as generated values are immutable."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


@dataclass(frozen=True, slots=True)
class PlannedField:
    name: str
    element: str  # the Kafka type of the value or of each array element
    is_array: bool
    nullable: bool
    compact: bool
    tag: int | None
    struct: type[Any] | None
    default: Any

    @property
    def fixed(self) -> str | None:
        """The struct format character of a scalar fixed-width field, if it is one."""
        return None if self.is_array else FIXED_FORMATS.get(self.element)


def plan(cls: type[Any]) -> tuple[list[PlannedField], bool]:
    flexible = bool(getattr(cls, "__flexible__", False))
    hints = typing.get_type_hints(cls)
    planned: list[PlannedField] = []
    has_unknown = False
    for f in dataclasses.fields(cls):
        kafka_type = f.metadata.get("kafka_type")
        if kafka_type == TAGGED_FIELDS:
            has_unknown = True
            continue
        if not isinstance(kafka_type, str):
            raise TypeError(f"{cls.__name__}.{f.name} has no kafka_type in its metadata")
        element = kafka_type.removeprefix("[]")
        struct_cls = struct_of(hints[f.name])
        if element not in FIXED_FORMATS and element not in SCALARS and element not in VARINT_TYPES:
            if struct_cls is None:
                raise TypeError(f"{cls.__name__}.{f.name}: no wire encoding for {kafka_type!r}")
            element = "struct"
        planned.append(
            PlannedField(
                name=f.name,
                element=element,
                is_array=kafka_type.startswith("[]"),
                nullable=bool(f.metadata.get("nullable", False)),
                compact=flexible and bool(f.metadata.get("flexible", True)),
                tag=f.metadata.get("tag"),
                struct=struct_cls if element == "struct" else None,
                default=default_of(f),
            )
        )
    if flexible != has_unknown:
        raise TypeError(f"{cls.__name__}: flexible classes, and only they, keep unknown tags")
    return planned, flexible


def element_width(f: PlannedField) -> int:
    """The fewest bytes one element of array ``f`` takes (0 only for a struct with no fields).

    The decoders bound an array's count by the bytes left divided by this.
    """
    fixed = FIXED_FORMATS.get(f.element)
    if fixed:
        return struct.calcsize(">" + fixed)
    if f.element == "uuid":
        return 16
    if f.element == "struct":
        assert f.struct is not None
        fields, flexible = plan(f.struct)
        return 1 if (fields or flexible) else 0
    return 1
