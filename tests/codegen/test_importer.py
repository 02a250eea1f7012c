"""The import step: comment-bearing JSON in, merged facts out, differences reported."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from codegen import importer, jsonc
from codegen.model import snake_case

pytestmark = pytest.mark.codegen

LICENSE = '// Licensed to the Apache Software Foundation (ASF)\n// "quoted" text\n'


def _write(folder: Path, message: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = LICENSE + json.dumps(message, indent=2).replace(
        '"fields"', '// a comment inside\n  "fields"', 1
    )
    (folder / f"{message['name']}.json").write_text(text)


def _request(
    name: str, versions: str, fields: list[dict[str, Any]], kind: str = "request"
) -> dict[str, Any]:
    return {
        "apiKey": 90,
        "type": kind,
        "name": name,
        "validVersions": versions,
        "flexibleVersions": "2+",
        "fields": fields,
    }


def _shared(tmp_path: Path, *snapshots: dict[str, Any] | list[dict[str, Any]]) -> Path:
    """The snapshot folders, oldest first, each with the given message (or messages)."""
    for folder, messages in zip(importer.SNAPSHOTS, snapshots, strict=False):
        for message in messages if isinstance(messages, list) else [messages]:
            _write(tmp_path / folder, message)
    (tmp_path / "kafka-schema-test").mkdir()
    return tmp_path


def test_comments_are_stripped_but_not_inside_strings(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('// header\n{ "a": "http://x//y", // trailing\n "b": 1 }\n')
    assert jsonc.load(path) == {"a": "http://x//y", "b": 1}


def test_versions_only_the_old_snapshot_declares_become_their_own_span(tmp_path: Path) -> None:
    field = {"name": "Id", "type": "int32", "versions": "0+"}
    old_only = {"name": "Legacy", "type": "string", "versions": "0-1"}
    shared = _shared(
        tmp_path,
        _request("PingRequest", "0-3", [old_only, field]),
        _request("PingRequest", "2-4", [field]),
    )
    files, findings = importer.import_all(shared)
    assert findings == []
    merged = json.loads(files["PingRequest.json"])
    assert merged["validVersions"] == "0-4"
    assert [(s["versions"], s["from"]) for s in merged["spans"]] == [
        ("0-1", "kafka-schema"),
        ("2-4", "kafka-schema-4.3"),
    ]
    assert "about" not in json.dumps(merged)


def test_a_different_wire_layout_in_a_shared_version_is_reported(tmp_path: Path) -> None:
    shared = _shared(
        tmp_path,
        _request("PingRequest", "0-3", [{"name": "Id", "type": "int32", "versions": "0+"}]),
        _request("PingRequest", "2-4", [{"name": "Id", "type": "int64", "versions": "0+"}]),
    )
    _, findings = importer.import_all(shared)
    assert findings == [
        "PingRequest v2: kafka-schema and kafka-schema-4.3 describe different wire layouts",
        "PingRequest v3: kafka-schema and kafka-schema-4.3 describe different wire layouts",
    ]


def test_the_three_snapshots_merge_newest_first(tmp_path: Path) -> None:
    assert importer.SNAPSHOTS == ("kafka-schema", "kafka-schema-4.3", "kafka-schema-4.3-more")
    field = {"name": "Id", "type": "int32", "versions": "0+"}
    shared = _shared(
        tmp_path,
        _request("PingRequest", "0-1", [field]),
        _request("PingRequest", "1-2", [field]),
        _request("PingRequest", "2-3", [field]),
    )
    files, findings = importer.import_all(shared)
    assert findings == []
    spans = json.loads(files["PingRequest.json"])["spans"]
    assert [(s["versions"], s["from"]) for s in spans] == [
        ("0", "kafka-schema"),
        ("1", "kafka-schema-4.3"),
        ("2-3", "kafka-schema-4.3-more"),
    ]


def _unstable_api(
    tmp_path: Path, old_response: list[dict[str, Any]], new_response: list[dict[str, Any]]
) -> Path:
    """Ping v0-1 in the oldest snapshot (v1 marked unstable) and as released in the newest."""
    request = _request("PingRequest", "0-1", [{"name": "Id", "type": "int32", "versions": "0+"}])
    return _shared(
        tmp_path,
        [
            request | {"latestVersionUnstable": True},
            _request("PingResponse", "0-1", old_response, "response"),
        ],
        [],
        [request, _request("PingResponse", "0-1", new_response, "response")],
    )


def test_a_version_marked_unstable_takes_the_released_layout_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # As ReadShareGroupStateSummaryResponse v0: the request file marks the API's latest version
    # unstable, and the response changed before release without a version bump.
    old = [{"name": "Offset", "type": "int64", "versions": "0+"}]
    new = [{"name": "Epoch", "type": "int32", "versions": "1+"}, *old]
    shared = _unstable_api(tmp_path, old, new)
    with caplog.at_level(logging.INFO, logger="codegen.importer"):
        files, findings = importer.import_all(shared)
    assert findings == []
    spans = json.loads(files["PingResponse.json"])["spans"]
    assert [(s["versions"], s["from"]) for s in spans] == [("0-1", "kafka-schema-4.3-more")]
    assert [f["name"] for f in spans[0]["fields"]] == ["Epoch", "Offset"]
    assert caplog.messages == [
        "note: PingResponse v1: kafka-schema marked this version unstable; "
        "the layout of kafka-schema-4.3-more, as released, replaces it"
    ]


def test_a_different_layout_of_a_stable_version_still_fails_beside_an_unstable_one(
    tmp_path: Path,
) -> None:
    old = [{"name": "Offset", "type": "int64", "versions": "0+"}]
    new = [{"name": "Offset", "type": "int32", "versions": "0+"}]
    _, findings = importer.import_all(_unstable_api(tmp_path, old, new))
    assert findings == [
        "PingResponse v0: kafka-schema and kafka-schema-4.3-more describe different wire layouts"
    ]


def test_renamed_fields_of_one_layout_take_the_newest_names(tmp_path: Path) -> None:
    # As VoteRequest v0-1: CandidateEpoch became ReplicaEpoch, same type and place.
    shared = _shared(
        tmp_path,
        _request(
            "PingRequest", "0-1", [{"name": "CandidateEpoch", "type": "int32", "versions": "0+"}]
        ),
        [],
        _request(
            "PingRequest", "0-2", [{"name": "ReplicaEpoch", "type": "int32", "versions": "0+"}]
        ),
    )
    files, findings = importer.import_all(shared)
    assert findings == []
    spans = json.loads(files["PingRequest.json"])["spans"]
    assert [f["name"] for s in spans for f in s["fields"]] == ["ReplicaEpoch"]


def test_a_renamed_api_takes_the_newest_name(tmp_path: Path) -> None:
    field = {"name": "Id", "type": "int32", "versions": "0+"}
    shared = _shared(
        tmp_path,
        _request("OldNameRequest", "0", [field]),
        _request("NewNameRequest", "0-1", [field]),
    )
    files, findings = importer.import_all(shared)
    assert findings == []
    assert "NewNameRequest.json" in files
    assert "OldNameRequest.json" not in files


def test_defaults_become_typed_json_values(tmp_path: Path) -> None:
    fields = [
        {"name": "A", "type": "int32", "versions": "0+", "default": "0x7fffffff"},
        {"name": "B", "type": "bool", "versions": "0+", "default": "true"},
        {
            "name": "C",
            "type": "string",
            "versions": "0+",
            "nullableVersions": "0+",
            "default": "null",
        },
        {"name": "D", "type": "uuid", "versions": "0+", "default": "AAAAAAAAAAAAAAAAAAAAAQ"},
    ]
    shared = _shared(
        tmp_path, _request("PingRequest", "0", fields), _request("PingRequest", "0", fields)
    )
    files, _ = importer.import_all(shared)
    merged = json.loads(files["PingRequest.json"])["spans"][0]["fields"]
    assert [f["default"] for f in merged] == [
        2147483647,
        True,
        None,
        "00000000-0000-0000-0000-000000000001",
    ]


@pytest.mark.parametrize(
    ("name", "snake"),
    [
        ("ClientSoftwareName", "client_software_name"),
        ("myInt16", "my_int16"),
        ("IsrNodes", "isr_nodes"),
        ("SASLMechanism", "sasl_mechanism"),
        ("Async", "async_"),
    ],
)
def test_snake_case(name: str, snake: str) -> None:
    assert snake_case(name) == snake
