"""The consumer's metrics, with the names of Java's ``FetchMetricsRegistry``,
``KafkaConsumerMetrics`` and ``ConsumerCoordinatorMetrics``; the cluster layer adds the
connection and per-broker ones.

Recorded per Fetch answer, per ``getmany`` and per partition a ``getmany`` returns records
of, per commit, heartbeat and member state change; never per record.

``consumer-fetch-manager-metrics``:

=========================================  ==============================================
``fetch-latency-avg``, ``-max``            ms from a Fetch to its answer (a long poll's
                                           wait included, as in Java)
``fetch-rate``, ``fetch-total``            Fetch answers
``fetch-size-avg``, ``-max``               bytes of records in one answer
``bytes-consumed-rate``, ``-total``        bytes of records fetched (counted as answers
                                           arrive; Java counts them as the application
                                           reads them: the same once the buffer, at most
                                           two answers per partition, is read)
``records-consumed-rate``, ``-total``      records ``getmany`` returned
``records-lag-max``                        the largest lag recorded in the windows
``records-lag``, ``-avg``, ``-max``        per partition (group key
                                           ``consumer-fetch-manager-metrics,topic=T,
                                           partition=P``): the high watermark (last stable
                                           offset with read_committed) minus the position,
                                           after each ``getmany`` that returned its records;
                                           gone when the partition is no longer assigned
=========================================  ==============================================

``consumer-metrics``: ``poll-idle-ratio-avg`` (Java's: a ``getmany``'s time over that plus
the time since the previous one began), ``time-between-poll-avg``, ``-max`` (ms),
``last-poll-seconds-ago``.

``consumer-coordinator-metrics`` (with a ``group_id``): ``commit-latency-avg``, ``-max``,
``commit-rate``, ``commit-total`` (commits answered); ``rebalance-latency-avg``, ``-max``,
``-total`` (ms from joining, or from a new assignment, to STABLE), ``rebalance-total``,
``failed-rebalance-total`` (a rebalance ended by being thrown out, a fatal error or leaving),
``last-rebalance-seconds-ago``; ``heartbeat-response-time-max``, ``heartbeat-rate``,
``heartbeat-total``, ``last-heartbeat-seconds-ago``; ``assigned-partitions``.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from kafkawire.cluster import TopicPartition
from kafkawire.metrics import (
    Avg,
    CumulativeCount,
    CumulativeSum,
    Max,
    MetricName,
    Metrics,
    Rate,
    Sensor,
    Value,
)

from .fetching.subscription import PartitionState
from .group.member_state import MemberState
from .settings import ConsumerSettings

if TYPE_CHECKING:
    from .group.membership import GroupMembership

__all__ = [
    "ConsumerMetrics",
    "FetchAnswerMetrics",
    "HeartbeatMetrics",
    "PollMetrics",
    "add_stats",
    "telemetry_labels",
    "timed_poll",
]

FETCH = "consumer-fetch-manager-metrics"
CONSUMER = "consumer-metrics"
COORDINATOR = "consumer-coordinator-metrics"

P = ParamSpec("P")
R = TypeVar("R")

_REBALANCING = frozenset({MemberState.JOINING, MemberState.RECONCILING})
_REBALANCE_FAILED = frozenset({MemberState.FENCED, MemberState.FATAL, MemberState.PREPARE_LEAVING})


def add_stats(sensor: Sensor, group: str, *stats: tuple[str, Any]) -> Sensor:
    """``sensor`` with each ``(name, stat)`` of ``stats`` as a metric of ``group``."""
    for name, stat in stats:
        sensor.add(MetricName(name, group), stat)
    return sensor


class FetchAnswerMetrics:
    """Fetch answers, in ``group``: ``fetch-latency-avg``, ``-max``, ``fetch-rate``,
    ``fetch-total``, ``fetch-size-avg``, ``-max``, ``bytes-consumed-rate``, ``-total`` (Java's
    ``FetchMetricsManager`` and ``ShareFetchMetricsManager`` alike)."""

    def __init__(self, metrics: Metrics, group: str) -> None:
        self._latency = add_stats(
            metrics.sensor("fetch-latency"),
            group,
            ("fetch-latency-avg", Avg()),
            ("fetch-latency-max", Max()),
            ("fetch-rate", Rate(count=True)),
            ("fetch-total", CumulativeCount()),
        )
        self._size = add_stats(
            metrics.sensor("bytes-fetched"),
            group,
            ("fetch-size-avg", Avg()),
            ("fetch-size-max", Max()),
            ("bytes-consumed-rate", Rate()),
            ("bytes-consumed-total", CumulativeSum()),
        )

    def answered(self, latency_ms: float, size: int) -> None:
        """A fetch was answered after ``latency_ms`` with ``size`` bytes of records."""
        self._latency.record(latency_ms)
        self._size.record(size)


class PollMetrics:
    """A consumer's polls, in ``group``: ``time-between-poll-avg``, ``-max`` (ms),
    ``poll-idle-ratio-avg``, ``last-poll-seconds-ago`` (Java's ``KafkaConsumerMetrics``, and
    ``KafkaShareConsumerMetrics`` in ``consumer-share-metrics``)."""

    def __init__(self, metrics: Metrics, group: str) -> None:
        self._between_polls = add_stats(
            metrics.sensor("time-between-poll"),
            group,
            ("time-between-poll-avg", Avg()),
            ("time-between-poll-max", Max()),
        )
        self._poll_idle = add_stats(
            metrics.sensor("poll-idle-ratio-avg"), group, ("poll-idle-ratio-avg", Avg())
        )
        self._poll_start = 0.0
        self._last_poll = 0.0  # when the last poll began (0: none yet)
        self._since_last_poll = 0.0
        metrics.add_gauge(MetricName("last-poll-seconds-ago", group), self._last_poll_ago)

    def poll_started(self) -> None:
        now = time.monotonic()
        self._poll_start = now
        self._since_last_poll = now - self._last_poll if self._last_poll else 0.0
        self._between_polls.record(self._since_last_poll * 1000)
        self._last_poll = now

    def poll_ended(self) -> None:
        spent = time.monotonic() - self._poll_start
        total = spent + self._since_last_poll
        self._poll_idle.record(spent / total if total > 0 else 0.0)

    @property
    def last_poll_at(self) -> float | None:
        """When the application last called ``getmany`` (``time.monotonic()``), if it did."""
        return self._last_poll or None

    def _last_poll_ago(self) -> float:
        return time.monotonic() - self._last_poll if self._last_poll else math.nan


class HeartbeatMetrics:
    """A group member's heartbeats, in ``group``: ``heartbeat-response-time-max``,
    ``heartbeat-rate``, ``heartbeat-total``, ``last-heartbeat-seconds-ago`` (since the last
    answer; Java's ``HeartbeatMetricsManager`` counts from the last one sent)."""

    def __init__(self, metrics: Metrics, group: str) -> None:
        self._heartbeat = add_stats(
            metrics.sensor("heartbeat-latency"),
            group,
            ("heartbeat-response-time-max", Max()),
            ("heartbeat-rate", Rate(count=True)),
            ("heartbeat-total", CumulativeCount()),
        )
        self._last_heartbeat = math.nan
        metrics.add_gauge(MetricName("last-heartbeat-seconds-ago", group), self._seconds_since)

    def heartbeat_answered(self, latency_ms: float) -> None:
        self._heartbeat.record(latency_ms)
        self._last_heartbeat = time.monotonic()

    def _seconds_since(self) -> float:
        return time.monotonic() - self._last_heartbeat


class ConsumerMetrics:
    """The consumer's sensors; the fetcher, the membership and the facade record in them."""

    def __init__(
        self, metrics: Metrics, settings: ConsumerSettings, assigned: Callable[[], int]
    ) -> None:
        """The sensors of a consumer of ``settings`` (``assigned()``: how many partitions it
        has), in ``metrics``."""
        self._metrics = metrics
        self._read_committed = settings.read_committed
        sensor = metrics.sensor
        self._answers = FetchAnswerMetrics(metrics, FETCH)
        self._records = add_stats(
            sensor("records-fetched"),
            FETCH,
            ("records-consumed-rate", Rate()),
            ("records-consumed-total", CumulativeSum()),
        )
        self._lag = add_stats(sensor("records-lag"), FETCH, ("records-lag-max", Max()))
        self._partition_lag: dict[TopicPartition, Sensor] = {}
        self.polls = PollMetrics(metrics, CONSUMER)
        self._rebalance_started: float | None = None
        self._last_rebalance = math.nan
        if settings.group_id is not None:
            self._add_coordinator(assigned)

    def _add_coordinator(self, assigned: Callable[[], int]) -> None:
        sensor = self._metrics.sensor
        self._commit = add_stats(
            sensor("commit-latency"),
            COORDINATOR,
            ("commit-latency-avg", Avg()),
            ("commit-latency-max", Max()),
            ("commit-rate", Rate(count=True)),
            ("commit-total", CumulativeCount()),
        )
        self._rebalance = add_stats(
            sensor("rebalance-latency"),
            COORDINATOR,
            ("rebalance-latency-avg", Avg()),
            ("rebalance-latency-max", Max()),
            ("rebalance-latency-total", CumulativeSum()),
            ("rebalance-total", CumulativeCount()),
        )
        self._failed_rebalance = add_stats(
            sensor("failed-rebalance"), COORDINATOR, ("failed-rebalance-total", CumulativeCount())
        )
        self._heartbeats = HeartbeatMetrics(self._metrics, COORDINATOR)
        gauge = self._metrics.add_gauge
        gauge(MetricName("assigned-partitions", COORDINATOR), assigned)
        gauge(MetricName("last-rebalance-seconds-ago", COORDINATOR), self._seconds_since_rebalance)

    # --- fetching -----------------------------------------------------------------------------

    def fetched(self, latency_ms: float, size: int) -> None:
        """A Fetch was answered after ``latency_ms`` with ``size`` bytes of records."""
        self._answers.answered(latency_ms, size)

    def consumed(self, records: int) -> None:
        """A ``getmany`` returns ``records`` records."""
        self._records.record(records)

    def partition_read(self, tp: TopicPartition, state: PartitionState) -> None:
        """Records of ``tp`` were handed out: record its lag behind the log's end."""
        end = state.last_stable_offset if self._read_committed else state.high_watermark
        position = state.position
        if end < 0 or position is None:
            return
        lag = end - position
        self._lag.record(lag)
        sensor = self._partition_lag.get(tp)
        if sensor is None:
            sensor = self._partition_lag[tp] = self._lag_sensor(tp)
        sensor.record(lag)

    def _lag_sensor(self, tp: TopicPartition) -> Sensor:
        tags = (("topic", tp.topic), ("partition", str(tp.partition)))
        sensor = self._metrics.sensor(f"{tp.topic}-{tp.partition}.records-lag")
        for name, stat in (
            ("records-lag", Value()),
            ("records-lag-avg", Avg()),
            ("records-lag-max", Max()),
        ):
            sensor.add(MetricName(name, FETCH, tags), stat)
        return sensor

    def assignment_changed(self, assigned: Callable[[TopicPartition], bool]) -> None:
        """Drop the per-partition metrics of partitions no longer ``assigned`` (as Java's
        ``FetchMetricsManager.maybeUpdateAssignment``)."""
        for tp in [tp for tp in self._partition_lag if not assigned(tp)]:
            self._metrics.remove_sensor(self._partition_lag.pop(tp).name)

    # --- polls --------------------------------------------------------------------------------

    @property
    def last_poll_at(self) -> float | None:
        """When the application last called ``getmany`` (``time.monotonic()``), if it did."""
        return self.polls.last_poll_at

    # --- the group ----------------------------------------------------------------------------

    def committed(self, latency_ms: float) -> None:
        self._commit.record(latency_ms)

    def heartbeat_answered(self, latency_ms: float) -> None:
        self._heartbeats.heartbeat_answered(latency_ms)

    def member_moved(self, old: MemberState, new: MemberState) -> None:
        """The member went from ``old`` to ``new``: a rebalance starts as it joins or takes
        a new assignment, and ends once it is STABLE (or fails, thrown out or leaving)."""
        now = time.monotonic()
        if new in _REBALANCING and self._rebalance_started is None:
            self._rebalance_started = now
        elif self._rebalance_started is not None:
            if new is MemberState.STABLE:
                self._rebalance.record((now - self._rebalance_started) * 1000)
                self._last_rebalance = now
                self._rebalance_started = None
            elif new in _REBALANCE_FAILED:
                self._failed_rebalance.record()
                self._rebalance_started = None

    def _seconds_since_rebalance(self) -> float:
        return time.monotonic() - self._last_rebalance


def timed_poll(
    poll: Callable[P, Coroutine[Any, Any, R]],
) -> Callable[P, Coroutine[Any, Any, R]]:
    """Record a consumer method's calls as polls (:class:`PollMetrics`); the consumer is the
    first argument and has ``_metrics`` with its ``polls``."""

    @functools.wraps(poll)
    async def timed(*args: P.args, **kwargs: P.kwargs) -> R:
        metrics: PollMetrics = args[0]._metrics.polls  # type: ignore[attr-defined]
        metrics.poll_started()
        try:
            return await poll(*args, **kwargs)
        finally:
            metrics.poll_ended()

    return timed


def telemetry_labels(settings: ConsumerSettings, group: GroupMembership | None) -> dict[str, str]:
    """The resource labels of the consumer's pushed metrics (Java's
    ``ClientTelemetryProvider``: the group, the instance, the member once it has an id)."""
    member = None if group is None else group.generation.member_id
    labels = {
        "group_id": settings.group_id,
        "group_instance_id": settings.group_instance_id,
        "group_member_id": member,
    }
    return {key: value for key, value in labels.items() if value}
