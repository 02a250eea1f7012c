"""What a fake cluster is told at start: its size, its defaults, its timers, the versions served.

Every number has Kafka's default unless a test needs it small (the group timers say so), and is
named after the broker setting it stands for, so a test reads like the server.properties it
imitates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["FakeConfig"]


@dataclass(frozen=True, kw_only=True)
class FakeConfig:
    """The settings of one :class:`~kafkawire.testing.fake.FakeCluster` (frozen: a value).

    ``api_versions`` overrides the versions served per API key, to play an older broker
    (``{11: range(0, 6)}``: JoinGroup v0-5 only); an API mapped to an empty range is not
    served at all. Without an entry, an API is served at every version kafkawire has of it
    that its handler implements.
    """

    num_brokers: int = 3
    cluster_id: str = "kafkawire-fake"
    # Topics: Kafka's num.partitions, auto.create.topics.enable, default.replication.factor
    # (3 here, capped by the number of brokers, so that leaders can move between replicas).
    default_partitions: int = 1
    auto_create_topics: bool = True
    default_replication_factor: int = 3
    max_message_bytes: int = 1048588
    # Groups (read by the group coordinator).
    group_initial_rebalance_delay_ms: int = 0
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    consumer_group_heartbeat_interval_ms: int = 5000
    consumer_group_session_timeout_ms: int = 45000
    # Share groups (KIP-932): group.share.heartbeat.interval.ms, group.share.session.timeout.ms,
    # group.share.max.size; group.share.record.lock.duration.ms with the bounds a group's own
    # share.record.lock.duration.ms must keep to (group.share.{min,max}.record.lock.duration.ms),
    # group.share.delivery.count.limit, group.share.partition.max.record.locks (the in-flight
    # records of one share partition) and group.share.max.share.sessions (per broker).
    share_group_heartbeat_interval_ms: int = 5000
    share_group_session_timeout_ms: int = 45000
    share_group_max_size: int = 200
    share_group_record_lock_duration_ms: int = 30000
    share_group_min_record_lock_duration_ms: int = 15000
    share_group_max_record_lock_duration_ms: int = 60000
    share_group_delivery_count_limit: int = 5
    share_group_partition_max_record_locks: int = 2000
    share_group_max_share_sessions: int = 2000
    # Transactions: transaction.max.timeout.ms.
    transaction_max_timeout_ms: int = 900000
    # Fetch sessions: max.incremental.fetch.session.cache.slots, and how long a session must
    # sit unused before a new one may take its slot (min.incremental.fetch.session.eviction.ms).
    fetch_session_cache_slots: int = 1000
    fetch_session_eviction_ms: int = 120000
    # Client metrics (KIP-714): Kafka serves them only with a telemetry exporter plugin
    # configured (off by default); the compression types its answers accept, in order, and
    # telemetry.max.bytes.
    client_telemetry: bool = False
    client_telemetry_compression: tuple[int, ...] = (4, 3, 1, 2)  # zstd, lz4, gzip, snappy
    client_telemetry_max_bytes: int = 1048576
    api_versions: Mapping[int, range] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("num_brokers", "default_partitions", "default_replication_factor"):
            if getattr(self, name) < 1:
                raise ValueError(f"FakeConfig.{name} must be at least 1, not {getattr(self, name)}")
        for name in (
            "share_group_record_lock_duration_ms",
            "share_group_delivery_count_limit",
            "share_group_partition_max_record_locks",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"FakeConfig.{name} must be at least 1, not {getattr(self, name)}")
        if self.group_min_session_timeout_ms > self.group_max_session_timeout_ms:
            raise ValueError(
                "FakeConfig.group_min_session_timeout_ms "
                f"({self.group_min_session_timeout_ms}) exceeds group_max_session_timeout_ms "
                f"({self.group_max_session_timeout_ms})"
            )

    def replace(self, **changes: object) -> FakeConfig:
        """A copy with ``changes`` (keyword names as the fields)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]
