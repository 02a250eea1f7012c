"""``--stats`` of ``produce`` and ``consume``: the client's metrics at the end, on stderr.

Counts are the client's totals, each with its rate over the whole run (the total divided by
the command's time: Java's windowed ``-rate`` metrics cover at most the last minute and
under a minute divide by 30 s or more, which says little of a short run). Sizes and times are
the client's averages and maxima, as Java computes them: over the last minute or so (its two
30-second sample windows). Each broker's request latency gets a line of its own. A value
nothing was recorded for prints as ``-``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import click

__all__ = ["CONSUMER", "KAFKA_CLIENT", "PRODUCER", "Stats", "stats_option"]

T = TypeVar("T")
Unit = Literal["count", "bytes", "ms", "ratio", "number"]
Metrics = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Row:
    label: str
    group: str
    names: tuple[str, ...]  # one metric, or an average and a maximum
    unit: Unit


@dataclass(frozen=True)
class Report:
    """What ``--stats`` prints of one kind of client: its rows, and its metric group prefix
    (the per-broker latencies are in ``<prefix>-node-metrics``)."""

    title: str
    prefix: str
    rows: tuple[Row, ...]


def _rows(group: str, *rows: tuple[str, tuple[str, ...], Unit]) -> tuple[Row, ...]:
    return tuple(Row(label, group, names, unit) for label, names, unit in rows)


def _connections(prefix: str) -> tuple[Row, ...]:
    return _rows(
        f"{prefix}-metrics", ("connections opened", ("connection-creation-total",), "count")
    )


PRODUCER = Report(
    "producer",
    "producer",
    _rows(
        "producer-metrics",
        ("records sent", ("record-send-total",), "count"),
        ("records failed", ("record-error-total",), "count"),
        ("records retried", ("record-retry-total",), "count"),
        ("batch size avg/max", ("batch-size-avg", "batch-size-max"), "bytes"),
        ("records per request avg", ("records-per-request-avg",), "number"),
        ("compression ratio avg", ("compression-rate-avg",), "ratio"),
        ("queue time avg/max", ("record-queue-time-avg", "record-queue-time-max"), "ms"),
        ("request latency avg/max", ("request-latency-avg", "request-latency-max"), "ms"),
        ("throttle time avg/max", ("produce-throttle-time-avg", "produce-throttle-time-max"), "ms"),
    )
    + _connections("producer"),
)
CONSUMER = Report(
    "consumer",
    "consumer",
    _rows(
        "consumer-fetch-manager-metrics",
        ("records consumed", ("records-consumed-total",), "count"),
        ("bytes consumed", ("bytes-consumed-total",), "count"),
        ("fetches", ("fetch-total",), "count"),
        ("fetch latency avg/max", ("fetch-latency-avg", "fetch-latency-max"), "ms"),
        ("fetch size avg/max", ("fetch-size-avg", "fetch-size-max"), "bytes"),
        ("records lag max", ("records-lag-max",), "number"),
    )
    + _rows(
        "consumer-coordinator-metrics",
        ("commits", ("commit-total",), "count"),
        ("commit latency avg/max", ("commit-latency-avg", "commit-latency-max"), "ms"),
        ("rebalances", ("rebalance-total",), "count"),
        ("rebalance latency avg/max", ("rebalance-latency-avg", "rebalance-latency-max"), "ms"),
    )
    + _connections("consumer"),
)
KAFKA_CLIENT = Report("client", "kafka-client", _connections("kafka-client"))


def stats_option(function: Callable[..., T]) -> Callable[..., T]:
    """``--stats``, given to the command as ``stats``."""
    return click.option(
        "--stats",
        is_flag=True,
        help="At the end, print the client's rates and latencies to stderr (Java's metric "
        "names: see the README's Metrics section).",
    )(function)


class Stats:
    """Keeps the client a command ran (when ``--stats`` was given) and prints its metrics."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._client: Any = None
        self._report: Report | None = None

    def watch(self, client: Any, report: Report) -> None:
        """Print ``client``'s ``metrics()`` as ``report`` says, at the end."""
        if self.enabled:
            self._client, self._report = client, report

    def print(self, seconds: float, counted: Sequence[tuple[str, int]] = ()) -> None:
        """Print the metrics, rates over ``seconds``, after the ``counted`` events (what the
        command counted itself, as ``(label, count)``)."""
        if self._client is None or self._report is None:
            return
        for line in stats_lines(self._client.metrics(), self._report, seconds, counted):
            click.echo(line, err=True)


def stats_lines(
    metrics: Metrics, report: Report, seconds: float, counted: Sequence[tuple[str, int]] = ()
) -> list[str]:
    """The lines of ``report`` of ``metrics`` after ``counted``, rates over ``seconds``."""
    rows = [(label, _count(count, seconds)) for label, count in counted]
    rows += [(row.label, _value(metrics.get(row.group, {}), row, seconds)) for row in report.rows]
    node_prefix = f"{report.prefix}-node-metrics,node-id="
    for group in sorted(g for g in metrics if g.startswith(node_prefix)):
        node = group.removeprefix(node_prefix)
        latency = Row("", group, ("request-latency-avg", "request-latency-max"), "ms")
        rows.append((f"{node} request latency avg/max", _value(metrics[group], latency, seconds)))
    width = max(len(label) for label, _ in rows)
    return [f"Stats of the {report.title} ({seconds:.1f} s):"] + [
        f"  {label:<{width}}  {value}" for label, value in rows
    ]


def _value(group: dict[str, float], row: Row, seconds: float) -> str:
    values = [group.get(name, math.nan) for name in row.names]
    if row.unit == "count":
        (total,) = values
        return "-" if math.isnan(total) else _count(total, seconds)
    shown = " / ".join(_number(v, row.unit) for v in values)
    suffix = {"bytes": " bytes", "ms": " ms"}.get(row.unit, "")
    return shown + suffix if any(not math.isnan(v) for v in values) else shown


def _count(total: float, seconds: float) -> str:
    rate = f" ({total / seconds:,.1f}/s)" if seconds > 0 else ""
    return f"{total:,.0f}{rate}"


def _number(value: float, unit: Unit) -> str:
    if math.isnan(value):
        return "-"
    if unit == "ratio":
        return f"{value:.2f}"
    if unit == "ms":
        return f"{value:,.1f}"
    return f"{value:,.0f}"
