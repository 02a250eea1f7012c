"""KIP-714's standard metric names, which every push of a subscription to them carries."""

from __future__ import annotations

PRODUCER_REQUIRED = {
    f"org.apache.kafka.producer.{name}"
    for name in (
        "connection.creation.rate",
        "connection.creation.total",
        "node.request.latency.avg",
        "node.request.latency.max",
        "produce.throttle.time.avg",
        "produce.throttle.time.max",
        "record.queue.time.avg",
        "record.queue.time.max",
    )
}
CONSUMER_REQUIRED = {
    f"org.apache.kafka.consumer.{name}"
    for name in (
        "connection.creation.rate",
        "connection.creation.total",
        "node.request.latency.avg",
        "node.request.latency.max",
        "poll.idle.ratio.avg",
        "coordinator.commit.latency.avg",
        "coordinator.commit.latency.max",
        "coordinator.assigned.partitions",
        "coordinator.rebalance.latency.avg",
        "coordinator.rebalance.latency.max",
        "coordinator.rebalance.latency.total",
        "fetch.manager.fetch.latency.avg",
        "fetch.manager.fetch.latency.max",
    )
}
