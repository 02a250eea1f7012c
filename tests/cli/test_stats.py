"""``produce --stats`` and ``consume --stats``: the client's rates and latencies on stderr at
the end, on the fake cluster (run on a thread of its own, as ``fake_broker``)."""

from __future__ import annotations

import math
import re
import uuid

from kafkawire.cli._stats import PRODUCER, stats_lines
from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run


def stat(stderr: str, label: str) -> str:
    """The value printed for ``label``."""
    found = re.search(rf"^  {re.escape(label)} +(.+)$", stderr, re.MULTILINE)
    assert found, f"no {label!r} in:\n{stderr}"
    return found.group(1)


def test_produce_and_consume_print_rates_and_latencies(run: Run, fake_broker: Broker) -> None:
    topic = f"stats-{uuid.uuid4().hex[:8]}"
    lines = "".join(f"record {i}\n" for i in range(50))
    produced = run("produce", topic, "--stats", "-b", fake_broker.bootstrap, input=lines)
    assert produced.returncode == 0, produced.stderr
    assert "Stats of the producer" in produced.stderr
    assert re.fullmatch(r"50 \([\d,.]+/s\)", stat(produced.stderr, "records sent"))
    assert stat(produced.stderr, "records failed").startswith("0 ")
    assert re.fullmatch(r"[\d,.]+ / [\d,.]+ ms", stat(produced.stderr, "request latency avg/max"))
    assert re.search(
        r"^  node-\d+ request latency avg/max +[\d,.]+ / [\d,.]+ ms$", produced.stderr, re.M
    )
    assert "Produced 50 records" in produced.stderr  # the summary still comes last
    assert produced.stderr.index("Stats of") < produced.stderr.index("Produced 50")

    grouped = run(
        "consume", topic, "--group", f"g-{topic}", "--from-beginning", "--max-messages", "50",
        "--stats", "-b", fake_broker.bootstrap,
    )  # fmt: skip
    assert grouped.returncode == 0, grouped.stderr
    assert len(grouped.stdout.splitlines()) == 50
    assert "Stats of the consumer" in grouped.stderr
    assert stat(grouped.stderr, "records consumed").startswith("50 (")
    assert re.fullmatch(r"[\d,.]+ / [\d,.]+ ms", stat(grouped.stderr, "fetch latency avg/max"))
    assert stat(grouped.stderr, "commits") != "0 (0.0/s)"
    assert stat(grouped.stderr, "rebalances").startswith("1 ")

    direct = run(
        "consume",
        topic,
        "--from-beginning",
        "--exit-at-end",
        "--stats",
        "-b",
        fake_broker.bootstrap,
    )
    assert direct.returncode == 0, direct.stderr
    assert stat(direct.stderr, "records read").startswith("50 (")
    assert int(stat(direct.stderr, "connections opened").split()[0]) >= 1


def test_without_stats_nothing_more_is_printed(run: Run, fake_broker: Broker) -> None:
    topic = f"stats-{uuid.uuid4().hex[:8]}"
    produced = run("produce", topic, "-b", fake_broker.bootstrap, input="a\n")
    assert produced.returncode == 0, produced.stderr
    assert "Stats" not in produced.stderr


def test_values_never_recorded_print_as_a_dash() -> None:
    metrics = {"producer-metrics": {"record-send-total": 0.0, "request-latency-avg": math.nan}}
    lines = stats_lines(metrics, PRODUCER, 2.0)
    assert lines[0] == "Stats of the producer (2.0 s):"
    assert any(re.fullmatch(r"  records sent +0 \(0\.0/s\)", line) for line in lines)
    assert any(re.fullmatch(r"  request latency avg/max +- / -", line) for line in lines)
