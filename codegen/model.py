"""``schema-json/`` as typed values, and a message resolved at one version.

A resolved struct lists only the fields present at that version, each with its wire facts at
that version (nullable, tagged, flexible) and its nested struct resolved the same way.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .versions import Versions

PRIMITIVES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64"}
    | {"string", "uuid", "bytes", "records"}
)


def snake_case(name: str) -> str:
    """``ClientSoftwareName`` -> ``client_software_name``; keywords get a trailing ``_``."""
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text).lower()
    return f"{text}_" if keyword.iskeyword(text) else text


@dataclass(frozen=True)
class Message:
    """One schema-json file."""

    name: str
    kind: str  # request, response, header, data
    api_key: int | None
    valid: Versions
    spans: tuple[dict[str, Any], ...]
    source: str  # the schema-json path it came from, for the generated header
    is_test: bool
    listeners: tuple[str, ...] | None

    @classmethod
    def load(cls, path: Path, root: Path) -> Message:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            name=raw["name"],
            kind=raw["type"],
            api_key=raw.get("apiKey"),
            valid=Versions.parse(raw["validVersions"]),
            spans=tuple(raw["spans"]),
            source=str(Path(root.name) / path.relative_to(root)),
            is_test=path.parent != root,
            listeners=tuple(raw["listeners"]) if "listeners" in raw else None,
        )

    def span(self, version: int) -> dict[str, Any]:
        return next(s for s in self.spans if version in Versions.parse(s["versions"]))

    def flexible(self, version: int) -> bool:
        return version in Versions.parse(self.span(version).get("flexibleVersions", "none"))

    def resolve(self, version: int) -> Struct:
        span = self.span(version)
        common = {s["name"]: s["fields"] for s in span.get("commonStructs", [])}
        return _resolve(self.name, span["fields"], common, version, self.flexible(version))


@dataclass(frozen=True)
class Field:
    """A field present at one version, with its wire facts at that version."""

    schema_name: str
    type: str  # the schema's type string, e.g. "int32", "[]string", "[]MetadataResponseTopic"
    nullable: bool
    tag: int | None  # set when the field is tagged at this version
    flexible_override: bool | None  # False where the field stays non-compact in a flexible version
    default: Any  # the schema default as a JSON value; absent defaults are the type's zero
    has_default: bool
    entity_type: str | None
    ignorable: bool
    struct: Struct | None  # for struct and array-of-struct fields

    @property
    def name(self) -> str:
        return snake_case(self.schema_name)

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element(self) -> str:
        return self.type.removeprefix("[]")


@dataclass(frozen=True)
class Struct:
    name: str
    version: int
    flexible: bool
    fields: tuple[Field, ...]

    def nested(self) -> list[Struct]:
        """Every struct reachable from this one, innermost first, each once, then this one."""
        seen: dict[str, Struct] = {}
        self._collect(seen)
        return list(seen.values())

    def _collect(self, seen: dict[str, Struct]) -> None:
        for f in self.fields:
            if f.struct is not None and f.struct.name not in seen:
                f.struct._collect(seen)
        seen.setdefault(self.name, self)


def _resolve(
    name: str,
    fields: list[dict[str, Any]],
    common: dict[str, list[dict[str, Any]]],
    version: int,
    flexible: bool,
) -> Struct:
    resolved: list[Field] = []
    for raw in fields:
        if version not in Versions.parse(raw["versions"]):
            continue
        element = raw["type"].removeprefix("[]")
        struct = None
        if element not in PRIMITIVES:
            nested = raw.get("fields", common.get(element))
            if nested is None:
                raise ValueError(f"{name}.{raw['name']}: unknown struct type {element}")
            struct = _resolve(element, nested, common, version, flexible)
        tagged = version in Versions.parse(raw.get("taggedVersions", "none"))
        override = None
        if flexible and "flexibleVersions" in raw:
            override = version in Versions.parse(raw["flexibleVersions"])
            override = None if override else False
        resolved.append(
            Field(
                schema_name=raw["name"],
                type=raw["type"],
                nullable=version in Versions.parse(raw.get("nullableVersions", "none")),
                tag=raw["tag"] if tagged else None,
                flexible_override=override,
                default=raw.get("default"),
                has_default="default" in raw,
                entity_type=raw.get("entityType"),
                ignorable=bool(raw.get("ignorable", False)),
                struct=struct,
            )
        )
    return Struct(name, version, flexible, tuple(resolved))
