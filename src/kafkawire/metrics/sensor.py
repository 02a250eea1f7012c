"""A sensor: where one kind of event is recorded, and the samples its metrics read.

Java gives each windowed stat of a sensor (``Avg``, ``Max``, ``Rate``) its own list of
samples; they all see the same values at the same times, so here they share one: each sample
keeps the sum, the count and the largest value of what was recorded in its window. One
``record`` costs one clock reading and one sample update, whatever the sensor reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .names import MetricName
    from .registry import Metrics
    from .stats import Stat

__all__ = ["Sample", "Sensor"]


class Sample:
    """What one window holds (Java's ``SampledStat.Sample``)."""

    __slots__ = ("count", "max", "start", "sum")

    def __init__(self, start: float) -> None:
        self.reset(start)

    def reset(self, start: float) -> None:
        self.start = start  # when the window began (the sensor's clock, seconds)
        self.sum = 0.0
        self.count = 0
        self.max = -math.inf


class Sensor:
    """Records values; its metrics (added with :meth:`add`) read what it recorded."""

    __slots__ = (
        "_clock",
        "_current",
        "_metrics",
        "_sample",
        "_samples",
        "_size",
        "_window",
        "events",
        "last",
        "name",
        "total",
    )

    def __init__(
        self,
        name: str,
        metrics: Metrics,
        *,
        clock: Callable[[], float],
        window: float,
        samples: int,
    ) -> None:
        self.name = name
        self._metrics = metrics
        self._clock = clock
        self._window = window  # seconds
        self._size = samples
        self._samples: list[Sample] = []  # made as windows begin, as Java's are
        self._sample: Sample | None = None  # the current window's
        self._current = 0
        self.total = 0.0  # every value ever recorded, summed
        self.events = 0  # how many were recorded
        self.last = 0.0  # the last one (Java's Value starts at 0)

    def add(self, name: MetricName, stat: Stat) -> Sensor:
        """Report ``stat`` of this sensor as the metric ``name``; returns the sensor."""
        self._metrics.register(name, lambda now: stat.measure(self, now), stat.kind)
        self._metrics.owned_by(self.name, name)
        return self

    def record(self, value: float = 1.0) -> None:
        """Record one event of ``value`` (1 when it is only counted)."""
        now = self._clock()
        sample = self._sample
        if sample is None or now - sample.start >= self._window:
            sample = self._advance(now)
        sample.sum += value
        sample.count += 1
        if value > sample.max:  # noqa: PLR1730 - a call to max() costs more, once per event
            sample.max = value
        self.total += value
        self.events += 1
        self.last = value

    def _advance(self, now: float) -> Sample:
        """Begin a window at ``now``: a new sample while fewer than ``samples`` exist, else
        the oldest one, emptied."""
        if self._sample is not None:
            self._current = (self._current + 1) % self._size
        if self._current < len(self._samples):
            sample = self._samples[self._current]
            sample.reset(now)
        else:
            sample = Sample(now)
            self._samples.append(sample)
        self._sample = sample
        return sample

    def samples(self, now: float) -> list[Sample]:
        """The windows still counted at ``now``: those older than all the windows together
        are emptied first and begin again at ``now`` (Java's ``purgeObsoleteSamples``)."""
        expired = self._size * self._window
        for sample in self._samples:
            if now - sample.start >= expired:
                sample.reset(now)
        return self._samples

    def window_span(self, now: float) -> float:
        """The time a rate divides by: since the oldest window began, but at least
        ``samples - 1`` whole windows (Java's ``Rate.windowSize``), and at least 1 ms."""
        samples = self.samples(now)
        elapsed = now - min((s.start for s in samples), default=now)
        whole = int(elapsed // self._window)
        if whole < self._size - 1:
            elapsed += (self._size - 1 - whole) * self._window
        return max(elapsed, 0.001)
