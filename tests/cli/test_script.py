"""The installed ``kafkawire`` script, as a user's shell runs it: its entry point, what it
writes, and its exit codes. The other tests of the commands run them in-process (conftest.py)."""

from __future__ import annotations

import subprocess
import uuid

from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run


def test_produce_then_consume_through_the_script(
    kafkawire_script: str, run: Run, fake_broker: Broker
) -> None:
    topic = f"script-{uuid.uuid4().hex[:8]}"
    bootstrap = ["-b", fake_broker.bootstrap]
    assert run("topics", "create", topic, "--partitions", "1", *bootstrap).returncode == 0
    produced = subprocess.run(
        [kafkawire_script, "produce", topic, *bootstrap],
        input="one\ntwo\n", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert produced.returncode == 0, produced.stderr
    assert produced.stderr.startswith(f"Produced 2 records to {topic} (partition 0) in ")
    consumed = subprocess.run(
        [kafkawire_script, "consume", topic, "--from-beginning", "--exit-at-end", *bootstrap],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (consumed.returncode, consumed.stdout) == (0, "one\ntwo\n"), consumed.stderr


def test_a_usage_error_exits_2_with_one_line(kafkawire_script: str) -> None:
    result = subprocess.run(
        [kafkawire_script, "topics", "create", "t", "--partitions", "x", "-b", "127.0.0.1:9"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "Invalid value for '--partitions'" in result.stderr
