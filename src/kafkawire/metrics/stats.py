"""What a metric reports of its sensor, with the names and arithmetic of Java's stats.

Windowed (over the sensor's samples, see :mod:`.sensor`): :class:`Avg` (NaN before any
value), :class:`Max` (NaN before any value), :class:`Rate` (per second; of the values'
sum, or with ``count=True`` of how many there were, Java's ``Rate(new WindowedCount())``).
Over all time: :class:`CumulativeSum`, :class:`CumulativeCount`, :class:`Value` (the last
value recorded). ``kind`` says how KIP-714 reports it: Java's ``KafkaMetricsCollector``
sends cumulative sums and counts as monotonic sums, everything else as gauges.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .sensor import Sensor

__all__ = ["Avg", "CumulativeCount", "CumulativeSum", "Max", "Rate", "Stat", "Value"]

MetricKind = Literal["gauge", "sum"]
"""How KIP-714 reports a metric: a gauge, or a monotonic sum."""


class Stat:
    """How a metric reads its sensor at ``now`` (the sensor's clock)."""

    kind: MetricKind = "gauge"

    def measure(self, sensor: Sensor, now: float) -> float:
        """The metric's value at ``now``."""
        raise NotImplementedError


class Avg(Stat):
    """The mean of the values in the sensor's windows (NaN before any value)."""

    def measure(self, sensor: Sensor, now: float) -> float:
        """The mean of the values recorded in the windows ``now`` covers."""
        samples = sensor.samples(now)
        count = sum(s.count for s in samples)
        return sum(s.sum for s in samples) / count if count else math.nan


class Max(Stat):
    """The largest value in the sensor's windows (NaN before any value)."""

    def measure(self, sensor: Sensor, now: float) -> float:
        """The largest value recorded in the windows ``now`` covers."""
        return float(max((s.max for s in sensor.samples(now) if s.count), default=math.nan))


class Rate(Stat):
    """Per second over the windows: the values' sum, or (``count``) their number; per
    ``per`` seconds if given (3600: Java's ``Rate(TimeUnit.HOURS, ...)``)."""

    def __init__(self, *, count: bool = False, per: float = 1.0) -> None:
        self._count = count
        self._per = per

    def measure(self, sensor: Sensor, now: float) -> float:
        """Per second (or per ``per`` seconds) over the windows ``now`` covers."""
        span = sensor.window_span(now)  # purges the old windows first
        samples = sensor.samples(now)
        done = sum(s.count for s in samples) if self._count else sum(s.sum for s in samples)
        return done / span * self._per


class CumulativeSum(Stat):
    """Every value ever recorded, summed (Java's ``CumulativeSum``, once ``Total``)."""

    kind: MetricKind = "sum"

    def measure(self, sensor: Sensor, now: float) -> float:
        """The sum of every value recorded."""
        return sensor.total


class CumulativeCount(Stat):
    """How many values were ever recorded."""

    kind: MetricKind = "sum"

    def measure(self, sensor: Sensor, now: float) -> float:
        """How many values were recorded."""
        return float(sensor.events)


class Value(Stat):
    """The last value recorded (0 before any)."""

    def measure(self, sensor: Sensor, now: float) -> float:
        """The last value recorded."""
        return float(sensor.last)  # recorded as given (an int, often)
