"""One client's metrics: its sensors, the metrics they report, its gauges.

Java's ``Metrics``: a sensor is found or made by name (:meth:`Metrics.sensor`), a metric name
may be registered once (a second is a bug: ``ValueError``), and removing a sensor removes its
metrics (a partition no longer assigned takes its per-partition metrics with it). Reading
(:meth:`Metrics.as_dict`, :meth:`Metrics.measurements`) measures every metric at one instant.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .names import MetricName
from .sensor import Sensor
from .stats import MetricKind

__all__ = ["Measurement", "MetricKind", "Metrics"]

DEFAULT_SAMPLE_WINDOW_MS = 30000  # Java's metrics.sample.window.ms
DEFAULT_NUM_SAMPLES = 2  # Java's metrics.num.samples


@dataclass(frozen=True, slots=True)
class Measurement:
    """One metric's value at one instant, and what a push needs to report it."""

    name: MetricName
    value: float
    kind: MetricKind
    start_unix_nano: int
    """When the metric began counting (wall clock): a cumulative sum's start time."""


@dataclass(frozen=True, slots=True)
class _Metric:
    read: Callable[[float], float]
    kind: MetricKind
    start_unix_nano: int


class Metrics:
    """The registry; ``clock`` (seconds, monotonic) times samples, ``wall_clock`` (Unix
    nanoseconds) stamps measurements."""

    def __init__(
        self,
        *,
        sample_window_ms: int = DEFAULT_SAMPLE_WINDOW_MS,
        num_samples: int = DEFAULT_NUM_SAMPLES,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], int] = time.time_ns,
    ) -> None:
        if sample_window_ms <= 0 or num_samples < 1:
            raise ValueError(
                "metrics need sample_window_ms > 0 and num_samples >= 1, not "
                f"{sample_window_ms} and {num_samples}"
            )
        self._window = sample_window_ms / 1000
        self._num_samples = num_samples
        self.clock = clock
        self.wall_clock = wall_clock
        self._sensors: dict[str, Sensor] = {}
        self._metrics: dict[MetricName, _Metric] = {}
        self._owned: dict[str, list[MetricName]] = {}  # sensor name -> its metrics

    # --- sensors and metrics ----------------------------------------------------------------

    def sensor(self, name: str) -> Sensor:
        """The sensor ``name``, made (without metrics) if it does not exist."""
        sensor = self._sensors.get(name)
        if sensor is None:
            sensor = self._sensors[name] = Sensor(
                name, self, clock=self.clock, window=self._window, samples=self._num_samples
            )
        return sensor

    def get_sensor(self, name: str) -> Sensor | None:
        """The sensor named ``name``, if there is one."""
        return self._sensors.get(name)

    def remove_sensor(self, name: str) -> None:
        """Forget the sensor ``name`` and its metrics (nothing if there is none)."""
        self._sensors.pop(name, None)
        for metric in self._owned.pop(name, ()):
            self._metrics.pop(metric, None)

    def register(self, name: MetricName, read: Callable[[float], float], kind: MetricKind) -> None:
        """Report ``read(now)`` as ``name`` (for :meth:`Sensor.add`)."""
        if name in self._metrics:
            raise ValueError(f"a metric named {name.name!r} in {name.group_key!r} exists already")
        self._metrics[name] = _Metric(read, kind, self.wall_clock())

    def owned_by(self, sensor: str, name: MetricName) -> None:
        """``name`` goes when ``sensor`` is removed."""
        self._owned.setdefault(sensor, []).append(name)

    def add_gauge(self, name: MetricName, read: Callable[[], float]) -> None:
        """Report ``read()`` as ``name``, called whenever the metrics are read."""
        self.register(name, lambda now: float(read()), "gauge")

    def remove_metric(self, name: MetricName) -> None:
        """Forget the metric ``name`` (nothing if there is none)."""
        self._metrics.pop(name, None)

    # --- reading ------------------------------------------------------------------------------

    def measurements(self) -> list[Measurement]:
        """Every metric's value now."""
        now = self.clock()
        return [
            Measurement(name, metric.read(now), metric.kind, metric.start_unix_nano)
            for name, metric in list(self._metrics.items())
        ]

    def as_dict(self) -> dict[str, dict[str, float]]:
        """``{group key: {name: value}}``, the group key carrying the tags (see
        :mod:`.names`), as kafka-python's ``metrics()`` returns them."""
        out: dict[str, dict[str, float]] = {}
        for measurement in self.measurements():
            name = measurement.name
            out.setdefault(name.group_key, {})[name.name] = measurement.value
        return out
