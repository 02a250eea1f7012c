"""``kafkawire produce`` and ``kafkawire consume`` round trips through the embedded broker."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.fake.faults import refuse_partition
from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run, created_topic
from .test_tally import INVALID_RECORD

pytestmark = pytest.mark.integration


@pytest.fixture
def topic(run: Run, tansu_broker: Broker) -> str:
    return created_topic(run, tansu_broker.bootstrap, 2)


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


def test_json_round_trip_as_the_help_shows(run: Run, tansu_broker: Broker, topic: str) -> None:
    bootstrap = ["-b", tansu_broker.bootstrap]
    lines = "".join(
        json.dumps(r) + "\n"
        for r in (
            {"key": "k", "value": "one", "headers": [["h", "1"]], "partition": 0},
            {"value": {"base64": "/w=="}, "partition": 1, "timestamp": 1_700_000_000_000},
        )
    )
    assert run("produce", topic, "--format", "json", *bootstrap, input=lines).returncode == 0
    dumped = run("consume", topic, "--from-beginning", "--format", "json", "-e", *bootstrap)
    assert dumped.returncode == 0, dumped.stderr
    copy = f"{topic}-copy"
    assert run("topics", "create", copy, "--partitions", "2", *bootstrap).returncode == 0
    again = run("produce", copy, "--format", "json", *bootstrap, input=dumped.stdout)
    assert again.returncode == 0, again.stderr
    assert "Produced 2 records to" in again.stderr

    def shown(name: str) -> list[tuple[object, ...]]:
        records = consume_json(run, tansu_broker, name, "--from-beginning", "-e")
        fields = ("partition", "offset", "timestamp", "key", "value", "headers")
        return sorted(tuple(json.dumps(r[f]) for f in fields) for r in records)

    assert shown(copy) == shown(topic)


def test_partition_option_is_where_every_record_goes(
    run: Run, tansu_broker: Broker, topic: str
) -> None:
    bootstrap = ["-b", tansu_broker.bootstrap]
    lines = '{"value": "a", "partition": 0}\n{"value": "b"}\n'
    sent = run("produce", topic, "--partition", "1", "--format", "json", *bootstrap, input=lines)
    assert sent.returncode == 0, sent.stderr
    assert "(partition 1)" in sent.stderr
    records = consume_json(run, tansu_broker, topic, "--from-beginning", "-e")
    assert [(r["partition"], r["value"]) for r in records] == [(1, "a"), (1, "b")]
    beyond = run("produce", topic, "--partition", "7", *bootstrap, input="c\n")
    assert beyond.returncode == 2
    assert f"'--partition': topic '{topic}' has 2 partitions (0-1): 7 is not one" in beyond.stderr


def test_a_bad_line_is_named_with_what_was_written_before_it(
    run: Run, tansu_broker: Broker, topic: str
) -> None:
    bootstrap = ["-b", tansu_broker.bootstrap]
    refused_by_producer = '{"value": "a", "partition": 0}\n{"value": "b", "partition": 9}\n'
    result = run("produce", topic, "--format", "json", *bootstrap, input=refused_by_producer)
    assert result.returncode == 1
    assert result.stderr == (
        f"Error: line 2: topic '{topic}' has 2 partitions (0-1): partition 9 does not exist;"
        f" 1 record written to {topic} (partition 0) before it\n"
    )
    malformed = 'a\n{"value": "b", "headers": ["ab"]}\nc\n'
    result = run("produce", topic, "--format", "json", *bootstrap, input=malformed)
    assert result.returncode == 1
    assert result.stderr.startswith("Error: line 1: not JSON: ")
    result = run("produce", topic, "--format", "json", *bootstrap, input=malformed[2:])
    assert result.stderr == (
        'Error: line 1: headers[0] is not a [key, value] pair: "ab";'
        f" 0 records written to {topic} before it\n"
    )


def test_a_line_longer_than_a_record_can_be_is_refused(
    run: Run, tansu_broker: Broker, topic: str
) -> None:
    lines = b"short\n" + b"x" * (2 << 20) + b"\nnever sent\n"
    result = run("produce", topic, "--partition", "0", "-b", tansu_broker.bootstrap, input=lines)
    assert result.returncode == 1
    assert result.stderr == (
        b"Error: line 2: longer than the limit of 1,048,576 bytes;"
        b" 1 record written to " + topic.encode() + b" (partition 0) before it\n"
    )


async def test_failed_deliveries_are_counted_and_reported(
    kafkawire_script: str, fake_cluster: FakeCluster
) -> None:
    lines = b"".join(b'{"value": "v", "partition": %d}\n' % p for p in (0, 1, 0))
    fake_cluster.create_topic("t", 2)
    fake_cluster.control(refuse_partition(1, INVALID_RECORD), api_key="Produce", keep=True)
    process = await asyncio.create_subprocess_exec(
        kafkawire_script, "produce", "t", "--format", "json", "-b", fake_cluster.bootstrap,
        stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, stderr = await asyncio.wait_for(process.communicate(lines), 60)
    assert process.returncode == 1
    assert stderr.decode().startswith(
        "Error: 1 record failed, the first with: INVALID_RECORD (87): "
    )
    assert stderr.decode().endswith("; 2 records written to t (partition 0)\n")
