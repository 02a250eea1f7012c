"""``kafkawire api-versions`` and ``kafkawire topics`` against the embedded broker."""

from __future__ import annotations

import socket
import uuid

import pytest

from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run

pytestmark = pytest.mark.integration


def test_api_versions_side_by_side(run: Run, tansu_broker: Broker) -> None:
    result = run("api-versions", "--bootstrap-server", tansu_broker.bootstrap)
    assert result.returncode == 0, result.stderr
    (metadata,) = [line for line in result.stdout.splitlines() if " Metadata " in line]
    # The broker's range, kafkawire's range (0-13), and the version they would use.
    assert "0-13" in metadata
    assert (
        "ControlledShutdown" in result.stdout
    )  # kafkawire knows it; a KRaft broker does not serve it


def test_topic_lifecycle(run: Run, tansu_broker: Broker) -> None:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    bootstrap = ["--bootstrap-server", tansu_broker.bootstrap]
    created = run(
        "topics", "create", name, "--partitions", "3", "--config", "retention.ms=60000", *bootstrap
    )
    assert created.returncode == 0, created.stderr
    assert name in run("topics", "list", *bootstrap).stdout.split()
    # Tansu 0.6 reports the configs a topic was created with as defaults: ask for all.
    described = run("topics", "describe", name, "--all-configs", *bootstrap)
    assert described.returncode == 0, described.stderr
    assert "retention.ms=60000" in described.stdout
    assert [
        line.split()[0] for line in described.stdout.splitlines() if line.strip()[:1].isdigit()
    ] == ["0", "1", "2"]
    again = run("topics", "create", name, "--partitions", "3", *bootstrap)
    assert again.returncode == 1
    assert again.stderr.count("\n") == 1
    assert "already exists" in again.stderr
    assert run("topics", "delete", name, *bootstrap).returncode == 0
    assert name not in run("topics", "list", *bootstrap).stdout.split()


def test_bootstrap_from_the_environment(run: Run, tansu_broker: Broker) -> None:
    result = run("topics", "list", env={"KAFKAWIRE_BOOTSTRAP": tansu_broker.bootstrap})
    assert result.returncode == 0, result.stderr


def test_usage_errors_exit_2(run: Run) -> None:
    missing = run("topics", "list")
    assert missing.returncode == 2
    assert "--bootstrap-server" in missing.stderr
    assert run("topics", "create", "t", "--partitions", "x", "-b", "127.0.0.1:9").returncode == 2
    assert run("topics", "create", "t", "--config", "novalue", "-b", "127.0.0.1:9").returncode == 2
    assert run("no-such-command").returncode == 2


def test_missing_broker_is_one_line_and_exit_1(run: Run) -> None:
    with socket.socket() as sock:  # a loopback port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run("topics", "list", "-b", f"127.0.0.1:{port}", "--timeout", "1")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("Error: ")
    traced = run("topics", "list", "-b", f"127.0.0.1:{port}", "--timeout", "1", "--debug")
    assert "Traceback" in traced.stderr


def test_a_topic_that_does_not_exist_is_said_so(run: Run, tansu_broker: Broker) -> None:
    bootstrap = ["-b", tansu_broker.bootstrap]
    for command in ("describe", "delete"):
        result = run("topics", command, "no-such-topic", *bootstrap)
        assert result.returncode == 1
        assert result.stderr == "Error: topic 'no-such-topic' does not exist\n"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "a topic name cannot be empty"),
        ("..", "a topic cannot be named '..'"),
        ("a b", "topic name 'a b' has a character other than ASCII letters"),
        ("x" * 250, "is 250 characters long, more than 249"),
    ],
)
def test_topic_names_kafka_refuses_are_usage_errors(run: Run, name: str, why: str) -> None:
    result = run("topics", "create", name, "-b", "127.0.0.1:9")
    assert result.returncode == 2
    assert why in result.stderr
    assert "Invalid value for 'NAME'" in result.stderr


def test_an_address_needs_a_port(run: Run) -> None:
    result = run("topics", "list", "-b", "localhost")
    assert result.returncode == 2
    assert "'localhost' is not host:port (give HOST:PORT, e.g. localhost:9092)" in result.stderr
    from_env = run("topics", "list", env={"KAFKAWIRE_BOOTSTRAP": "localhost"})
    assert from_env.returncode == 2
