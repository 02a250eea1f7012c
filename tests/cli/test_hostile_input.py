"""Hostile input to the commands: each refusal is one line naming what was wrong, with a
non-zero exit, and ``produce`` still says what it wrote before it. On the fake cluster."""

from __future__ import annotations

import uuid

import pytest

from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run


@pytest.fixture
def topic(run: Run, fake_broker: Broker) -> str:
    name = f"hostile-{uuid.uuid4().hex[:8]}"
    created = run("topics", "create", name, "--partitions", "1", "-b", fake_broker.bootstrap)
    assert created.returncode == 0, created.stderr
    return name


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
