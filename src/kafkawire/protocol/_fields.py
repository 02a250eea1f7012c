"""Reading generated dataclass fields: the struct class a field holds, and its default."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any


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
