"""Hostile input to the commands: each refusal is one line naming what was wrong, with a
non-zero exit, and ``produce`` still says what it wrote before it. On the fake cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run, created_topic


@pytest.fixture
def topic(run: Run, fake_broker: Broker) -> str:
    return created_topic(run, fake_broker.bootstrap, 1)


@pytest.mark.parametrize(
    ("line", "refusal"),
    [
        (b'{"value": "\xff"}', b"line 2: not UTF-8: byte 12 of the line is 0xff"),
        (b'{"value": "\\ud800"}', b"line 2: value: a lone surrogate (\\ud800) is not text"),
        (b"[" * 100_000, b"line 2: not JSON: nested too deeply"),
        (b'{"value": "a", "timestamp": 99999999999999999999}', b"line 2: timestamp must be at"),
    ],
)
def test_a_json_line_python_cannot_take_is_named_after_what_was_written(
    run: Run, fake_broker: Broker, topic: str, line: bytes, refusal: bytes
) -> None:
    lines = b'{"value": "first"}\n' + line + b'\n{"value": "never"}\n'
    result = run("produce", topic, "--format", "json", "-b", fake_broker.bootstrap, input=lines)
    assert result.returncode == 1
    assert result.stderr.startswith(b"Error: " + refusal)
    assert result.stderr.endswith(
        b"; 1 record written to " + topic.encode() + b" (partition 0) before it\n"
    )


NOWHERE = ("-b", "127.0.0.1:9")  # never reached: each of these is refused before connecting


@pytest.mark.parametrize(
    ("args", "refusal"),
    [
        (["topics", "list", "--timeout", "inf"], "Invalid value for '--timeout': inf is not"),
        (["topics", "list", "--timeout", "nan"], "Invalid value for '--timeout': nan is not"),
        (["topics", "list", "--timeout", "1e-9"], "Invalid value for '--timeout': 1e-09 is not"),
        (["topics", "list", "--timeout", "1e300"], "Invalid value for '--timeout': 1e+300 is"),
        (["consume", "t", "--timestamp", "²"], "Invalid value for '--timestamp': '²' is neither"),
        (["consume", "t", "--timestamp", "99999999999999999999"], "'--timestamp': 99999999999"),
        (["consume", "t", "--timestamp", "0001-01-01"], "'--timestamp': '0001-01-01' is before"),
        (["consume", "t", "--timestamp", "1969-12-31T23:59:59.999+00:00"], "is before 1970"),
        (["consume", "t", "--offset", "9223372036854775808"], "Invalid value for '--offset'"),
        (["topics", "create", "t", "--partitions", "2147483648"], "for '--partitions'"),
        (["topics", "create", "t", "--replication-factor", "32768"], "'--replication-factor'"),
        (["groups", "reset-offsets", "g", "--to-offset", "9223372036854775808"], "'--to-offset'"),
        (["groups", "reset-offsets", "g", "--shift-by", "9223372036854775808"], "'--shift-by'"),
        (["groups", "reset-offsets", "g", "--to-datetime", "²"], "'--to-datetime': '²'"),
        (["decode", "--response-to", "²:1", "--hex", "00"], "Invalid value for '--response-to'"),
    ],
)
def test_numbers_out_of_range_are_usage_errors(run: Run, args: list[str], refusal: str) -> None:
    # Before: OverflowError/ValueError lines naming no option, or the encoder's "out of range
    # for int32" from the request, or a time before 1970 read as ListOffsets' "latest" (-1).
    result = run(*args, *(NOWHERE if args[0] != "decode" else ()))
    assert result.returncode == 2, result.stderr
    assert refusal in result.stderr
    assert "Traceback" not in result.stderr


def test_a_command_config_that_is_not_text_is_a_usage_error(run: Run, tmp_path: Path) -> None:
    binary = tmp_path / "client.properties"
    binary.write_bytes(b"security.protocol=SSL\n\xff\xfe\x00\x01")
    result = run("topics", "list", "--command-config", str(binary), *NOWHERE)
    assert result.returncode == 2
    assert f"Invalid value for --command-config: {binary}: not UTF-8 text (line 2)" in (
        result.stderr
    )


def test_a_command_config_without_end_is_refused_at_its_limit(run: Run) -> None:
    # /dev/zero was read until the machine ran out of memory.
    result = run("topics", "list", "--command-config", "/dev/zero", *NOWHERE)
    assert result.returncode == 2
    assert "/dev/zero: larger than 1 MiB, more than a properties file holds" in result.stderr


def test_a_negative_frame_size_is_said_as_such(run: Run) -> None:
    # Was "frame at byte 0 needs 3 bytes, the capture has 8": 4 + (-1).
    result = run("decode", "--compact", "--hex", "ffffffff00112233")
    assert result.returncode == 1
    assert result.stderr == "Error: byte 0: frame at byte 0 has a negative size (-1)\n"


@pytest.mark.parametrize("command", ["describe", "reset-offsets"])
def test_an_empty_group_id_is_a_usage_error(run: Run, command: str) -> None:
    # Was "DescribeGroupsRequest names no group to route by", after connecting.
    target = ["--to-earliest"] if command == "reset-offsets" else []
    result = run("groups", command, "", *target, *NOWHERE)
    assert result.returncode == 2
    assert "Invalid value for 'GROUP': a group id cannot be empty" in result.stderr


def test_a_group_state_kafka_does_not_have_is_a_usage_error(run: Run) -> None:
    # Was "No groups." from the brokers, which match states by name; Java's tool refuses it.
    result = run("groups", "list", "--state", "Stabel", *NOWHERE)
    assert result.returncode == 2
    assert "Invalid value for '--state': 'Stabel' is not one of" in result.stderr


def test_a_group_state_is_taken_in_any_case(run: Run, fake_broker: Broker, topic: str) -> None:
    bootstrap = ("-b", fake_broker.bootstrap)
    reset = run("groups", "reset-offsets", "g", "--topic", topic, "--to-earliest", *bootstrap)
    assert reset.returncode == 0, reset.stderr
    assert "g" in run("groups", "list", "--state", "empty", *bootstrap).stdout.split()
    assert run("groups", "list", "--state", "STABLE", *bootstrap).stderr == "No groups.\n"


def test_resetting_a_topic_that_does_not_exist_names_it(run: Run, fake_broker: Broker) -> None:
    # Was "Would reset 0 partitions", exit 0: a typo in --topic went unnoticed.
    result = run(
        "groups", "reset-offsets", "g", "--topic", "nosuch", "--to-earliest", "--dry-run",
        "-b", fake_broker.bootstrap,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr == "Error: UNKNOWN_TOPIC_OR_PARTITION (3): topic nosuch\n"
