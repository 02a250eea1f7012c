"""Step 1: upstream message definitions -> ``schema-json/``.

Reads the comment-bearing JSON of three Apache Kafka snapshots (an older full set that still
declares the oldest versions, a newer set of client APIs with newer versions, and the rest of
Kafka 4.3.0: streams and share groups, newer raft and share-state versions) plus the upstream
test messages, keeps only the facts the wire needs, and writes one strict JSON file per message.
A message that several snapshots define becomes a list of *spans*: each version comes from the
newest snapshot that declares it. Every version two snapshots declare must have the same wire
layout; any difference is reported and nothing is written. The one exception is a version the
older snapshot marked unstable (``latestVersionUnstable``): Kafka may still change such a version
before it releases it, so the newer (released) layout wins, and a note is logged. Where an API
or a field was renamed, the newer name wins (names are not part of the wire layout).
"""

from __future__ import annotations

import base64
import json
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import jsonc
from .versions import NONE, Versions

_log = logging.getLogger(__name__)

# Oldest first: a later snapshot's definition wins the versions it declares.
SNAPSHOTS = ("kafka-schema", "kafka-schema-4.3", "kafka-schema-4.3-more")
TEST_SNAPSHOT = "kafka-schema-test"

PRIMITIVES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64"}
    | {"string", "uuid", "bytes", "records"}
)
_INTEGERS = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64"})
# The order facts are written in, so every file reads the same way. "about" (prose) and the
# Java-only hint "zeroCopy" are left out.
_FIELD_KEYS = (
    "name",
    "type",
    "versions",
    "nullableVersions",
    "taggedVersions",
    "tag",
    "flexibleVersions",
    "default",
    "entityType",
    "ignorable",
    "mapKey",
    "fields",
)
_VERSION_KEYS = ("versions", "nullableVersions", "taggedVersions", "flexibleVersions")


class SchemaError(Exception):
    """Upstream definitions that cannot be imported as they are."""


@dataclass
class _Definition:
    """One upstream file, normalized."""

    snapshot: str
    raw: dict[str, Any]
    valid: Versions
    structs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def unstable(self) -> int | None:
        """The version this request marks unstable (its API's latest), if any.

        Kafka writes ``latestVersionUnstable`` on request files only; it holds for the response
        of the same API too.
        """
        return self.valid.high if self.raw.get("latestVersionUnstable") else None

    @property
    def key(self) -> tuple[str, int] | str:
        kind = self.raw["type"]
        if kind in ("request", "response"):
            return (kind, int(self.raw["apiKey"]))
        return str(self.raw["name"])


def _default(type_name: str, value: Any, where: str) -> Any:
    """The schema's default as a JSON value of the field's own type."""
    text = str(value).strip() if not isinstance(value, bool) else ("true" if value else "false")
    if type_name in _INTEGERS:
        return int(text, 0)
    if type_name == "float64":
        return float(text)
    if type_name == "bool":
        if text not in ("true", "false"):
            raise SchemaError(f"{where}: bad bool default {value!r}")
        return text == "true"
    if text == "null":
        return None
    if type_name == "string":
        return str(value)
    if type_name == "uuid":
        # Kafka writes UUIDs as unpadded URL-safe base64; schema-json keeps the standard form.
        return str(uuid.UUID(bytes=base64.urlsafe_b64decode(text + "==")))
    raise SchemaError(f"{where}: no custom default is allowed for {type_name}, got {value!r}")


def _normalize_field(raw: dict[str, Any], where: str) -> dict[str, Any]:
    facts = {k: raw[k] for k in _FIELD_KEYS if k in raw}
    where = f"{where}.{raw['name']}"
    if "versions" not in facts:
        if "taggedVersions" not in facts:
            raise SchemaError(f"{where}: neither versions nor taggedVersions")
        facts["versions"] = facts["taggedVersions"]
    for key in _VERSION_KEYS:
        if key in facts:
            facts[key] = str(Versions.parse(facts[key]))
    if "tag" in facts:
        facts["tag"] = int(facts["tag"])  # a few upstream files quote it ("tag": "0")
    if "default" in facts:
        facts["default"] = _default(facts["type"], facts["default"], where)
    if "fields" in facts:
        facts["fields"] = [_normalize_field(f, where) for f in facts["fields"]]
    return _ordered(facts)


def _ordered(facts: dict[str, Any]) -> dict[str, Any]:
    return {k: facts[k] for k in _FIELD_KEYS if k in facts}


def _load(path: Path, snapshot: str) -> _Definition:
    raw = jsonc.load(path)
    name = raw["name"]
    message: dict[str, Any] = {
        "name": name,
        "type": raw["type"],
    }
    if "apiKey" in raw:
        message["apiKey"] = raw["apiKey"]
    for key in ("listeners",):
        if key in raw:
            message[key] = raw[key]
    message["validVersions"] = str(Versions.parse(raw["validVersions"]))
    message["flexibleVersions"] = str(Versions.parse(raw.get("flexibleVersions", "none")))
    if raw.get("latestVersionUnstable"):
        message["latestVersionUnstable"] = True
    message["fields"] = [_normalize_field(f, name) for f in raw.get("fields", [])]
    structs = {
        s["name"]: [_normalize_field(f, f"{name}.{s['name']}") for f in s["fields"]]
        for s in raw.get("commonStructs", [])
    }
    if structs:
        message["commonStructs"] = [
            {
                "name": n,
                "versions": str(Versions.parse(s.get("versions", "0+"))),
                "fields": structs[n],
            }
            for n, s in zip(structs, raw["commonStructs"], strict=True)
        ]
    return _Definition(snapshot, message, Versions.parse(message["validVersions"]), structs)


# --- wire layout of one version, for comparing snapshots -----------------------------------


def _layout(defn: _Definition, fields: list[dict[str, Any]], version: int) -> tuple[Any, ...]:
    """Everything about ``fields`` at ``version`` that shapes the bytes, and nothing else."""
    items: list[tuple[Any, ...]] = []
    for f in fields:
        if version not in Versions.parse(f["versions"]):
            continue
        type_name: str = f["type"]
        element = type_name.removeprefix("[]")
        shape: Any = element
        if element not in PRIMITIVES:
            nested = f.get("fields")
            if nested is None:
                nested = defn.structs.get(element)
                if nested is None:
                    raise SchemaError(f"{defn.raw['name']}: unknown struct type {element}")
            shape = _layout(defn, nested, version)
        tagged = version in Versions.parse(f.get("taggedVersions", "none"))
        items.append(
            (
                type_name.startswith("[]"),
                shape,
                version in Versions.parse(f.get("nullableVersions", "none")),
                f.get("tag") if tagged else None,
                f.get("default") if tagged else None,
                str(Versions.parse(f["flexibleVersions"])) if "flexibleVersions" in f else None,
            )
        )
    return tuple(items)


def _message_layout(defn: _Definition, version: int) -> tuple[Any, ...]:
    flexible = version in Versions.parse(defn.raw["flexibleVersions"])
    return (flexible, _layout(defn, defn.raw["fields"], version))


# --- merging snapshots ---------------------------------------------------------------------


def _span(defn: _Definition, versions: Versions) -> dict[str, Any]:
    span: dict[str, Any] = {"versions": str(versions), "from": defn.snapshot}
    for key in ("flexibleVersions", "latestVersionUnstable", "fields", "commonStructs"):
        if key in defn.raw:
            span[key] = defn.raw[key]
    return span


def merge(
    definitions: list[_Definition], unstable: Mapping[str, int] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """One message from its definitions, oldest snapshot first; returns it and any findings.

    ``unstable`` maps a snapshot to the version of this message's API that it marked unstable.
    """
    unstable = unstable or {}
    newest = definitions[-1]
    findings: list[str] = []
    spans: list[dict[str, Any]] = []
    claimed: set[int] = set()
    for defn in reversed(definitions):
        own = defn.valid.as_set() - claimed
        for version in sorted(defn.valid.as_set() & claimed):
            newer = next(d for d in definitions[::-1] if version in d.valid)
            if _message_layout(defn, version) == _message_layout(newer, version):
                continue
            if unstable.get(defn.snapshot) == version:
                _log.info(
                    "note: %s v%d: %s marked this version unstable; "
                    "the layout of %s, as released, replaces it",
                    newest.raw["name"],
                    version,
                    defn.snapshot,
                    newer.snapshot,
                )
            else:
                findings.append(
                    f"{newest.raw['name']} v{version}: {defn.snapshot} and {newer.snapshot} "
                    "describe different wire layouts"
                )
        if own:
            try:
                span_versions = Versions.of(own)
            except ValueError as exc:
                raise SchemaError(f"{newest.raw['name']} in {defn.snapshot}: {exc}") from exc
            spans.append(_span(defn, span_versions))
            claimed |= own
    spans.sort(key=lambda s: Versions.parse(s["versions"]).low)
    message = {k: v for k, v in newest.raw.items() if k in ("name", "type", "apiKey", "listeners")}
    message["validVersions"] = str(Versions.of(claimed) if claimed else NONE)
    message["spans"] = spans
    return message, findings


def _unstable_versions(
    grouped: Mapping[tuple[str, int] | str, list[_Definition]],
) -> dict[int, dict[str, int]]:
    """API key -> snapshot -> the version that snapshot marked unstable (from its request)."""
    unstable: dict[int, dict[str, int]] = {}
    for key, definitions in grouped.items():
        if isinstance(key, tuple) and key[0] == "request":
            for defn in definitions:
                if defn.unstable is not None:
                    unstable.setdefault(key[1], {})[defn.snapshot] = defn.unstable
    return unstable


def import_all(shared: Path) -> tuple[dict[str, str], list[str]]:
    """Every schema-json file, by relative path, and every finding across snapshots."""
    grouped: dict[tuple[str, int] | str, list[_Definition]] = {}
    for snapshot in SNAPSHOTS:
        for path in sorted((shared / snapshot).glob("*.json")):
            defn = _load(path, snapshot)
            grouped.setdefault(defn.key, []).append(defn)
    unstable = _unstable_versions(grouped)
    files: dict[str, str] = {}
    findings: list[str] = []
    for key, definitions in grouped.items():
        api = unstable.get(key[1], {}) if isinstance(key, tuple) else {}
        message, found = merge(definitions, api)
        findings += found
        files[f"{message['name']}.json"] = _dump(message)
    for path in sorted((shared / TEST_SNAPSHOT).glob("*.json")):
        message, _ = merge([_load(path, TEST_SNAPSHOT)])
        files[f"test/{message['name']}.json"] = _dump(message)
    return files, findings


def _dump(message: dict[str, Any]) -> str:
    return json.dumps(message, indent=2, ensure_ascii=False) + "\n"
