"""KIP-714's names for a client's metrics, as Java's ``TelemetryMetricNamingConvention``.

``org.apache.kafka.`` + the group + ``.`` + the name, lower case, each ``-`` a ``.``, and the
group's ``-metrics`` dropped: ``request-latency-avg`` in ``producer-node-metrics`` becomes
``org.apache.kafka.producer.node.request.latency.avg``. Tags become attributes, lower case
with ``_`` for ``-`` (``node-id`` -> ``node_id``).
"""

from __future__ import annotations

import re

from kafkawire.metrics import MetricName

__all__ = ["DOMAIN", "attributes", "telemetry_name"]

DOMAIN = "org.apache.kafka"
_METRICS = re.compile(r"\.metrics")  # Java's GROUP_PATTERN "\\.(metrics)", every occurrence


def telemetry_name(name: MetricName) -> str:
    group = _METRICS.sub("", name.group.lower().replace("-", "."))
    return f"{DOMAIN}.{group}.{name.name.lower().replace('-', '.')}"


def attributes(name: MetricName) -> dict[str, str]:
    return {key.lower().replace("-", "_"): value for key, value in name.tags}
