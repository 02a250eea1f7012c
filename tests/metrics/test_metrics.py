"""The metrics core against Java's arithmetic (``SampledStat``, ``Rate.windowSize``), on a
clock the test moves."""

from __future__ import annotations

import math

import pytest

from kafkawire.metrics import (
    Avg,
    CumulativeCount,
    CumulativeSum,
    Max,
    MetricName,
    Metrics,
    Rate,
    Value,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(window_ms: int = 30000, samples: int = 2) -> tuple[Metrics, Clock]:
    clock = Clock()
    return Metrics(sample_window_ms=window_ms, num_samples=samples, clock=clock), clock


def value(metrics: Metrics, group: str, name: str) -> float:
    return metrics.as_dict()[group][name]


def test_windowed_stats_are_nan_before_any_value_and_totals_zero() -> None:
    metrics, _ = make()
    sensor = metrics.sensor("latency")
    for name, stat in [("a", Avg()), ("m", Max()), ("s", CumulativeSum()), ("v", Value())]:
        sensor.add(MetricName(name, "g"), stat)
    got = metrics.as_dict()["g"]
    assert math.isnan(got["a"])
    assert math.isnan(got["m"])
    assert got["s"] == 0.0
    assert got["v"] == 0.0


def test_avg_max_total_count_value() -> None:
    metrics, clock = make()
    sensor = metrics.sensor("latency")
    sensor.add(MetricName("avg", "g"), Avg()).add(MetricName("max", "g"), Max())
    sensor.add(MetricName("total", "g"), CumulativeSum())
    sensor.add(MetricName("count", "g"), CumulativeCount())
    sensor.add(MetricName("last", "g"), Value())
    for v in (4.0, 10.0, 1.0):
        sensor.record(v)
        clock.now += 1
    assert metrics.as_dict()["g"] == {
        "avg": 5.0,
        "max": 10.0,
        "total": 15.0,
        "count": 3.0,
        "last": 1.0,
    }


def test_old_windows_are_forgotten_but_totals_are_not() -> None:
    metrics, clock = make(window_ms=1000, samples=2)
    sensor = metrics.sensor("s")
    sensor.add(MetricName("avg", "g"), Avg()).add(MetricName("max", "g"), Max())
    sensor.add(MetricName("total", "g"), CumulativeSum())
    sensor.record(100.0)
    clock.now += 1.5  # a second window begins with the next value
    sensor.record(2.0)
    assert value(metrics, "g", "avg") == 51.0
    assert value(metrics, "g", "max") == 100.0
    clock.now += 1.0  # a third window reuses the first sample: 100 is gone
    sensor.record(4.0)
    assert value(metrics, "g", "avg") == 3.0
    assert value(metrics, "g", "max") == 4.0
    clock.now += 5.0  # both windows older than 2 s: purged when read
    assert math.isnan(value(metrics, "g", "avg"))
    assert value(metrics, "g", "total") == 106.0


def test_rate_divides_by_at_least_the_full_windows_but_one() -> None:
    # Java's Rate.windowSize: 10 s into the first window of 30 s, with 2 samples, the rate
    # divides by 10 + 30 s; once more than one whole window has passed, by the real span.
    metrics, clock = make()
    sensor = metrics.sensor("sent")
    sensor.add(MetricName("rate", "g"), Rate()).add(MetricName("events", "g"), Rate(count=True))
    sensor.record(20.0)
    sensor.record(20.0)
    clock.now += 10
    assert value(metrics, "g", "rate") == pytest.approx(40 / 40)
    assert value(metrics, "g", "events") == pytest.approx(2 / 40)
    clock.now += 35  # 45 s since the first window began: a second window starts
    sensor.record(5.0)
    assert value(metrics, "g", "rate") == pytest.approx(45 / 45)


def test_rate_before_any_value_is_zero() -> None:
    metrics, _ = make()
    metrics.sensor("s").add(MetricName("rate", "g"), Rate())
    assert value(metrics, "g", "rate") == 0.0


def test_tags_go_into_the_group_key_in_their_order() -> None:
    metrics, _ = make()
    lag = MetricName.of(
        "records-lag", "consumer-fetch-manager-metrics", {"topic": "orders", "partition": "0"}
    )
    metrics.sensor("lag").add(lag, Value())
    metrics.sensor("lag").record(7)
    assert metrics.as_dict() == {
        "consumer-fetch-manager-metrics,topic=orders,partition=0": {"records-lag": 7.0}
    }


def test_removing_a_sensor_removes_its_metrics() -> None:
    metrics, _ = make()
    metrics.sensor("a").add(MetricName("x", "g"), Value())
    metrics.add_gauge(MetricName("y", "g"), lambda: 3)
    metrics.remove_sensor("a")
    assert metrics.as_dict() == {"g": {"y": 3.0}}
    assert metrics.get_sensor("a") is None


def test_a_name_is_registered_once() -> None:
    metrics, _ = make()
    metrics.sensor("a").add(MetricName("x", "g"), Value())
    with pytest.raises(ValueError, match="'x' in 'g' exists already"):
        metrics.sensor("b").add(MetricName("x", "g"), Avg())


def test_measurements_say_what_a_push_reports_as_sums() -> None:
    metrics, _ = make()
    sensor = metrics.sensor("c")
    sensor.add(MetricName("total", "g"), CumulativeSum()).add(MetricName("avg", "g"), Avg())
    kinds = {m.name.name: m.kind for m in metrics.measurements()}
    assert kinds == {"total": "sum", "avg": "gauge"}


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="num_samples >= 1"):
        Metrics(num_samples=0)


def test_every_value_is_a_float_even_when_ints_were_recorded() -> None:
    metrics, _ = make()
    sensor = metrics.sensor("lag")
    for name, stat in [("a", Avg()), ("m", Max()), ("s", CumulativeSum()), ("v", Value())]:
        sensor.add(MetricName(name, "g"), stat)
    sensor.record(6)
    assert {name: type(value) for name, value in metrics.as_dict()["g"].items()} == {
        "a": float,
        "m": float,
        "s": float,
        "v": float,
    }
