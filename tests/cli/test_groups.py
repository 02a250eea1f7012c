"""``kafkawire groups``: list, describe with lag, and offset resets."""

from __future__ import annotations

import uuid

import pytest

from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run

pytestmark = pytest.mark.integration


def rows(out: str, first: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.split()[:1] == [first]]


def test_reset_then_describe_shows_lag(run: Run, tansu_broker: Broker) -> None:
    topic, group = f"cli-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    bootstrap = ["-b", tansu_broker.bootstrap]
    assert run("topics", "create", topic, "--partitions", "1", *bootstrap).returncode == 0
    # One record per batch: Tansu 0.6 answers ListOffsets "latest" with the last batch's base
    # offset + 1 (docs/design.md), right only for batches of one record.
    for value in ("a\n", "b\n"):
        assert run("produce", topic, *bootstrap, input=value).returncode == 0

    planned = run(
        "groups", "reset-offsets", group, "--topic", topic, "--to-latest", "--dry-run", *bootstrap
    )
    assert planned.returncode == 0, planned.stderr
    assert rows(planned.stdout, topic) == [[topic, "0", "2"]]
    assert group not in run("groups", "list", *bootstrap).stdout.split()  # nothing committed

    # Committing offset 1 of 2 is what a consumer that read one record would leave behind.
    to_start = run("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", *bootstrap)
    assert to_start.returncode == 0, to_start.stderr
    shifted = run("groups", "reset-offsets", group, "--shift-by", "1", *bootstrap)
    assert rows(shifted.stdout, topic) == [[topic, "0", "1"]]

    described = run("groups", "describe", group, *bootstrap)
    assert described.returncode == 0, described.stderr
    # topic, partition, committed, end, lag, member (none)
    assert rows(described.stdout, topic) == [[topic, "0", "1", "2", "1", "-"]]
    assert group in run("groups", "list", *bootstrap).stdout


def test_reset_needs_exactly_one_target(run: Run) -> None:
    result = run(
        "groups", "reset-offsets", "g", "--to-earliest", "--to-latest", "-b", "127.0.0.1:9"
    )
    assert result.returncode == 2
    assert run("groups", "reset-offsets", "g", "-b", "127.0.0.1:9").returncode == 2


def test_a_group_that_does_not_exist_is_said_so(run: Run, tansu_broker: Broker) -> None:
    result = run("groups", "describe", "no-such-group", "-b", tansu_broker.bootstrap)
    assert result.returncode == 1
    assert result.stderr == "Error: consumer group 'no-such-group' does not exist\n"
