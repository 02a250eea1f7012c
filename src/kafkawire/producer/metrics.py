"""The producer's metrics, with the names of Java's ``SenderMetricsRegistry`` (group
``producer-metrics``); the cluster layer adds the connection and per-broker ones.

Recorded per batch and per request, never per record: a batch's queue time, size and
compression ratio and its records as it is sent; a Produce request's latency, throttle time
and records as it is answered; a batch's records as it fails for good or is retried.

=========================================  ==============================================
``record-send-rate``, ``-total``           records sent (a retried batch counts again)
``record-error-rate``, ``-total``          records that failed for good (expired too)
``record-retry-rate``, ``-total``          records of batches sent again
``batch-split-rate``, ``-total``           batches split after the broker refused them as
                                           too large (MESSAGE_TOO_LARGE)
``record-queue-time-avg``, ``-max``        ms a batch waited from its first record to its
                                           sending (Java counts per batch too)
``request-latency-avg``, ``-max``          ms from a Produce request to its answer
``produce-throttle-time-avg``, ``-max``    ms the broker said it throttled the producer
``batch-size-avg``, ``-max``               bytes of a batch as sent
``compression-rate-avg``                   a batch's bytes sent / its records' bytes
                                           (1.0 without compression)
``records-per-request-avg``                records in one Produce request
``buffer-total-bytes``                     ``buffer_memory``
``buffer-available-bytes``                 what is left of it
``requests-in-flight``                     Produce requests awaiting their answer
=========================================  ==============================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkawire.metrics import Avg, CumulativeSum, Max, MetricName, Metrics, Rate

if TYPE_CHECKING:
    from .accumulator import RecordAccumulator
    from .sender import Sender

__all__ = ["GROUP", "ProducerMetrics"]

GROUP = "producer-metrics"


def _name(name: str, description: str) -> MetricName:
    return MetricName(name, GROUP, (), description)


class ProducerMetrics:
    """The producer's sensors; the sender records in them."""

    def __init__(self, metrics: Metrics, buffer_total: int) -> None:
        self._accumulator: RecordAccumulator | None = None  # the gauges read them once started
        self._sender: Sender | None = None
        sensor = metrics.sensor
        self._send = sensor("record-send")
        self._send.add(_name("record-send-rate", "records sent per second"), Rate())
        self._send.add(_name("record-send-total", "records sent"), CumulativeSum())
        self._errors = sensor("errors")
        self._errors.add(_name("record-error-rate", "records failed per second"), Rate())
        self._errors.add(_name("record-error-total", "records failed"), CumulativeSum())
        self._retries = sensor("record-retries")
        self._retries.add(_name("record-retry-rate", "records retried per second"), Rate())
        self._retries.add(_name("record-retry-total", "records retried"), CumulativeSum())
        self._splits = sensor("batch-split")
        self._splits.add(_name("batch-split-rate", "batches split per second"), Rate())
        self._splits.add(_name("batch-split-total", "batches split"), CumulativeSum())
        self._queue_time = sensor("queue-time")
        self._queue_time.add(_name("record-queue-time-avg", "ms batches waited"), Avg())
        self._queue_time.add(_name("record-queue-time-max", "ms a batch waited, at most"), Max())
        self._latency = sensor("request-time")
        self._latency.add(_name("request-latency-avg", "ms a Produce took"), Avg())
        self._latency.add(_name("request-latency-max", "ms a Produce took, at most"), Max())
        self._throttle = sensor("produce-throttle-time")
        self._throttle.add(_name("produce-throttle-time-avg", "ms throttled"), Avg())
        self._throttle.add(_name("produce-throttle-time-max", "ms throttled, at most"), Max())
        self._batch_size = sensor("batch-size")
        self._batch_size.add(_name("batch-size-avg", "bytes per batch"), Avg())
        self._batch_size.add(_name("batch-size-max", "bytes per batch, at most"), Max())
        self._compression = sensor("compression-rate")
        self._compression.add(_name("compression-rate-avg", "bytes sent per record byte"), Avg())
        self._per_request = sensor("records-per-request")
        self._per_request.add(_name("records-per-request-avg", "records per Produce"), Avg())
        metrics.add_gauge(_name("buffer-total-bytes", "buffer_memory"), lambda: buffer_total)
        metrics.add_gauge(
            _name("buffer-available-bytes", "free buffer_memory"),
            lambda: buffer_total if self._accumulator is None else self._accumulator.available,
        )
        metrics.add_gauge(
            _name("requests-in-flight", "Produce requests out"),
            lambda: 0 if self._sender is None else self._sender.requests_in_flight,
        )

    def attach(self, accumulator: RecordAccumulator, sender: Sender) -> None:
        """The producer started: its gauges read these from now on."""
        self._accumulator, self._sender = accumulator, sender

    def batch_sent(self, records: int, size: int, ratio: float, queued_ms: float) -> None:
        """A batch of ``records`` goes: ``size`` bytes, ``ratio`` of its records' size,
        after ``queued_ms`` in the accumulator."""
        self._send.record(records)
        self._batch_size.record(size)
        self._compression.record(ratio)
        self._queue_time.record(queued_ms)

    def request_answered(self, records: int, latency_ms: float, throttle_ms: int) -> None:
        self._per_request.record(records)
        self._latency.record(latency_ms)
        self._throttle.record(throttle_ms)

    def batch_failed(self, records: int) -> None:
        self._errors.record(records)

    def batch_retried(self, records: int) -> None:
        self._retries.record(records)

    def batch_split(self) -> None:
        self._splits.record(1)
