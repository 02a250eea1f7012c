"""The share consumer's metrics, with the group and metric names of Java's share consumer
(``ShareFetchMetricsRegistry``, ``KafkaShareConsumerMetrics``, ``HeartbeatMetricsManager`` and
``ShareRebalanceMetricsManager``, prefix ``consumer-share``); the cluster layer adds the
connection and per-broker ones (``consumer-metrics``, ``consumer-node-metrics``, as Java's
share consumer's network client).

Recorded per ShareFetch and ShareAcknowledge, per ``getmany``, per heartbeat and per
assignment; never per record.

``consumer-share-fetch-manager-metrics``:

=======================================  ===============================================
``fetch-latency-avg``, ``-max``          ms from a ShareFetch to its answer (its long poll
                                         included)
``fetch-rate``, ``fetch-total``          ShareFetch answers
``fetch-size-avg``, ``-max``             bytes of records in one answer
``bytes-consumed-rate``, ``-total``      bytes of records fetched, as answers arrive
``records-per-request-avg``, ``-max``    records one answer acquired for this member (new
                                         deliveries; Java counts them as the application
                                         reads them: the same once they are read)
``records-consumed-rate``, ``-total``    the same records, counted over time
``acknowledgements-send-rate``,          acknowledged offsets sent (a retried refusal is
``-total``                               sent, and counted, again)
``acknowledgements-error-rate``,         acknowledged offsets whose acknowledgement failed,
``-total``                               counted once, with the outcome the callback hears
``fetch-throttle-time-avg``, ``-max``    ms a ShareFetch answer says it was throttled
=======================================  ===============================================

``consumer-share-metrics``: :class:`~kafkawire.consumer.metrics.PollMetrics`' (a ``getmany``
or iteration step is a poll). ``consumer-share-coordinator-metrics``:
:class:`~kafkawire.consumer.metrics.HeartbeatMetrics`', ``rebalance-total`` and
``rebalance-rate-per-hour`` (a share member's rebalance is a new assignment applied: Java's
RECONCILING to STABLE).
"""

from __future__ import annotations

from kafkawire.consumer.metrics import (
    FetchAnswerMetrics,
    HeartbeatMetrics,
    PollMetrics,
    add_stats,
)
from kafkawire.metrics import Avg, CumulativeCount, CumulativeSum, Max, Metrics, Rate

__all__ = ["ShareConsumerMetrics", "share_telemetry_labels"]

FETCH = "consumer-share-fetch-manager-metrics"
SHARE = "consumer-share-metrics"
COORDINATOR = "consumer-share-coordinator-metrics"
_HOUR = 3600.0


class ShareConsumerMetrics:
    """The share consumer's sensors; the fetcher, the membership and the facade record in
    them."""

    def __init__(self, metrics: Metrics) -> None:
        sensor = metrics.sensor
        self._answers = FetchAnswerMetrics(metrics, FETCH)
        self._records = add_stats(
            sensor("records-fetched"),
            FETCH,
            ("records-per-request-avg", Avg()),
            ("records-per-request-max", Max()),
            ("records-consumed-rate", Rate()),
            ("records-consumed-total", CumulativeSum()),
        )
        self._sent = add_stats(
            sensor("sent-acknowledgements"),
            FETCH,
            ("acknowledgements-send-rate", Rate()),
            ("acknowledgements-send-total", CumulativeSum()),
        )
        self._failed = add_stats(
            sensor("failed-acknowledgements"),
            FETCH,
            ("acknowledgements-error-rate", Rate()),
            ("acknowledgements-error-total", CumulativeSum()),
        )
        self._throttle = add_stats(
            sensor("fetch-throttle-time"),
            FETCH,
            ("fetch-throttle-time-avg", Avg()),
            ("fetch-throttle-time-max", Max()),
        )
        self.polls = PollMetrics(metrics, SHARE)
        self.heartbeats = HeartbeatMetrics(metrics, COORDINATOR)
        self._rebalances = add_stats(
            sensor("rebalance-latency"),
            COORDINATOR,
            ("rebalance-total", CumulativeCount()),
            ("rebalance-rate-per-hour", Rate(count=True, per=_HOUR)),
        )

    def fetched(self, latency_ms: float, size: int, records: int, throttle_ms: int) -> None:
        """A ShareFetch was answered after ``latency_ms`` with ``size`` bytes of records, of
        which ``records`` were acquired for this member, throttled ``throttle_ms``."""
        self._answers.answered(latency_ms, size)
        self._records.record(records)
        self._throttle.record(throttle_ms)

    def acknowledgements_sent(self, count: int) -> None:
        """A request carried ``count`` acknowledged offsets."""
        if count:
            self._sent.record(count)

    def acknowledgements_failed(self, count: int) -> None:
        """The acknowledgements of ``count`` offsets failed for good."""
        if count:
            self._failed.record(count)

    def rebalanced(self) -> None:
        """The member applied a new assignment."""
        self._rebalances.record()


def share_telemetry_labels(group_id: str, member_id: str) -> dict[str, str]:
    """The resource labels of the share consumer's pushed metrics (as the consumer's: its
    group and its member id)."""
    return {"group_id": group_id, "group_member_id": member_id}
