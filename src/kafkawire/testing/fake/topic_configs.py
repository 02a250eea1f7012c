"""The topic and broker configs the fake knows: Kafka's defaults for a fixed set of keys.

CreateTopics refuses a key outside the set (INVALID_CONFIG, as Kafka refuses an unknown one);
DescribeConfigs answers the set, with a topic's own values marked as set for the topic.
"""

from __future__ import annotations

from collections.abc import Mapping

from .config import FakeConfig

__all__ = ["TOPIC_DEFAULTS", "broker_configs", "unknown_keys"]

TOPIC_DEFAULTS: Mapping[str, str] = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "delete.retention.ms": "86400000",
    "max.message.bytes": "1048588",
    "message.timestamp.type": "CreateTime",
    "min.insync.replicas": "1",
    "retention.bytes": "-1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
    "segment.ms": "604800000",
    "unclean.leader.election.enable": "false",
}


def broker_configs(config: FakeConfig) -> dict[str, str]:
    """A broker's configs: the broker-level names of the settings the fake has."""
    return {
        "auto.create.topics.enable": str(config.auto_create_topics).lower(),
        "default.replication.factor": str(config.default_replication_factor),
        "log.cleanup.policy": TOPIC_DEFAULTS["cleanup.policy"],
        "log.retention.ms": TOPIC_DEFAULTS["retention.ms"],
        "log.segment.bytes": TOPIC_DEFAULTS["segment.bytes"],
        "message.max.bytes": str(config.max_message_bytes),
        "min.insync.replicas": TOPIC_DEFAULTS["min.insync.replicas"],
        "num.partitions": str(config.default_partitions),
        "transaction.max.timeout.ms": str(config.transaction_max_timeout_ms),
    }


def unknown_keys(configs: Mapping[str, str | None]) -> list[str]:
    return sorted(key for key in configs if key not in TOPIC_DEFAULTS)
