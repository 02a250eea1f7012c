"""``kafkawire produce`` and ``kafkawire consume`` round trips through the embedded broker."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run

pytestmark = pytest.mark.integration


@pytest.fixture
def topic(run: Run, tansu_broker: Broker) -> str:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    created = run("topics", "create", name, "--partitions", "2", "-b", tansu_broker.bootstrap)
    assert created.returncode == 0, created.stderr
    return name


def consume_json(run: Run, broker: Broker, topic: str, *args: str) -> list[dict[str, object]]:
    result = run("consume", topic, "--format", "json", "-b", broker.bootstrap, *args)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_lines_with_keys_and_headers(run: Run, tansu_broker: Broker, topic: str) -> None:
    lines = "k1:one\nk2:two\nk1:three\n"
    produced = run(
        "produce", topic, "--key-separator", ":", "--header", "source=cli", "--header", "n=1",
        "--compression", "lz4", "-b", tansu_broker.bootstrap, input=lines,
    )  # fmt: skip
    assert produced.returncode == 0, produced.stderr
    assert "3 records" in produced.stderr
    records = consume_json(run, tansu_broker, topic, "--from-beginning", "--max-messages", "3")
    assert sorted((r["key"], r["value"]) for r in records) == [
        ("k1", "one"), ("k1", "three"), ("k2", "two"),
    ]  # fmt: skip
    assert {r["topic"] for r in records} == {topic}
    assert all(r["headers"] == [["source", "cli"], ["n", "1"]] for r in records)
    # The same key goes to the same partition, in order.
    k1 = [r for r in records if r["key"] == "k1"]
    assert k1[0]["partition"] == k1[1]["partition"]
    assert k1[0]["offset"] < k1[1]["offset"]  # type: ignore[operator]


def test_json_records_and_bytes_that_are_not_text(
    run: Run, tansu_broker: Broker, topic: str, tmp_path: Path
) -> None:
    source = tmp_path / "records.jsonl"
    source.write_text(
        json.dumps({"key": None, "value": {"base64": "/w=="}, "partition": 1}) + "\n"
        + json.dumps({"value": "text", "headers": {"h": "v"}, "partition": 1}) + "\n"
    )  # fmt: skip
    produced = run(
        "produce", topic, "--format", "json", "--file", str(source), "-b", tansu_broker.bootstrap
    )
    assert produced.returncode == 0, produced.stderr
    first, second = consume_json(
        run, tansu_broker, topic, "--partition", "1", "--offset", "0", "--exit-at-end"
    )
    assert (first["partition"], first["offset"], first["key"]) == (1, 0, None)
    assert first["value"] == {"base64": "/w=="}
    assert second["headers"] == [["h", "v"]]
    # Text output writes the values as they are.
    text = run(
        "consume",
        topic,
        "--partition",
        "1",
        "--offset",
        "1",
        "--exit-at-end",
        "-b",
        tansu_broker.bootstrap,
    )
    assert text.stdout == "text\n"


def test_bad_input_and_options(run: Run, tansu_broker: Broker, topic: str) -> None:
    bootstrap = ["-b", tansu_broker.bootstrap]
    bad_json = run("produce", topic, "--format", "json", *bootstrap, input='{"value": 1}\n')
    assert bad_json.returncode == 1
    assert "line 1" in bad_json.stderr
    grouped = run("consume", topic, "--group", "g", "--exit-at-end", *bootstrap)
    assert grouped.returncode == 2
    assert "--group reads until stopped" in grouped.stderr
    both = run("consume", topic, "--offset", "1", "--from-beginning", *bootstrap)
    assert both.returncode == 2
    assert run("produce", topic, "--compression", "brotli", *bootstrap).returncode == 2


def test_a_group_member_resumes_where_the_group_committed(
    run: Run, tansu_broker: Broker, topic: str
) -> None:
    group = f"cli-group-{uuid.uuid4().hex[:8]}"
    first = run("produce", topic, "--partition", "0", "-b", tansu_broker.bootstrap, input="a\nb\n")
    assert first.returncode == 0, first.stderr
    read = consume_json(
        run, tansu_broker, topic, "--group", group, "--from-beginning", "--max-messages", "2"
    )
    assert [r["value"] for r in read] == ["a", "b"]
    more = run("produce", topic, "--partition", "0", "-b", tansu_broker.bootstrap, input="c\n")
    assert more.returncode == 0, more.stderr
    # The group committed b: a new member starts after it, from-beginning or not.
    again = consume_json(
        run, tansu_broker, topic, "--group", group, "--from-beginning", "--max-messages", "1"
    )
    assert [r["value"] for r in again] == ["c"]


def test_group_reading_refuses_positions_of_its_own(run: Run, tansu_broker: Broker) -> None:
    result = run("consume", "t", "--group", "g", "--offset", "3", "-b", tansu_broker.bootstrap)
    assert result.returncode == 2
    assert "--group takes its partitions and positions from the group" in result.stderr
