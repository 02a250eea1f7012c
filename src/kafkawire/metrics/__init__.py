"""A client's metrics, after Kafka's Java ``org.apache.kafka.common.metrics`` (sans-IO).

Every client keeps one :class:`Metrics` registry. Code that sees an event records it on a
:class:`Sensor` (``sensor.record(value)``: a latency, a batch's size, one more connection);
a sensor's metrics read its samples: :class:`Avg`, :class:`Max`, :class:`Rate` (per second
over sampled windows), :class:`CumulativeSum` (Java's ``CumulativeSum``, once ``Total``),
:class:`CumulativeCount` and :class:`Value` (the last value). A gauge is a function the
registry calls when it is read (the free buffer memory, the partitions assigned).

Each metric has a :class:`MetricName`: its name, its group and its tags, as in Java
(``request-latency-avg`` in ``producer-node-metrics`` with ``node-id=node-1``).
:meth:`Metrics.as_dict` returns them as kafka-python's ``metrics()`` does, one dict per
group, with the tags written into the group's key as Java's JMX names carry them:
``"consumer-fetch-manager-metrics,topic=orders,partition=0"`` (see :mod:`.names`).

Samples follow Java's ``SampledStat``: ``num_samples`` windows of ``sample_window_ms``
(Java's ``metrics.num.samples``, 2, and ``metrics.sample.window.ms``, 30000), a new window
once the current one is that old, windows older than all of them together forgotten. A rate
divides what the windows hold by the time they span, counted as at least
``num_samples - 1`` whole windows (Java's ``Rate.windowSize``), so a rate read just after
the start is not inflated. Recording is cheap: one clock reading and one sample update per
``record`` however many metrics the sensor has (all of a sensor's windowed stats share its
samples; Java keeps one sample list per stat, which gives the same numbers).

Nothing here does I/O or imports the rest of kafkawire: the cluster layer below the
clients records connections and request latencies in it.
"""

from .names import MetricName
from .registry import Measurement, MetricKind, Metrics
from .sensor import Sensor
from .stats import Avg, CumulativeCount, CumulativeSum, Max, Rate, Stat, Value

__all__ = [
    "Avg",
    "CumulativeCount",
    "CumulativeSum",
    "Max",
    "Measurement",
    "MetricKind",
    "MetricName",
    "Metrics",
    "Rate",
    "Sensor",
    "Stat",
    "Value",
]
