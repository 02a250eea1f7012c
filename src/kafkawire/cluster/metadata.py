"""A snapshot of what a Metadata response said: brokers, topics, partition leaders.

Built from a MetadataResponse of any version (the fields it reads exist in all of them, or are
read where present), so the cache above does not care which version the broker negotiated.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kafkawire.errors import LeaderNotAvailableError, UnknownTopicOrPartitionError, error_for_code

from ._routing import InvalidPartitionError

__all__ = [
    "BrokerAddress",
    "ClusterMetadata",
    "PartitionMetadata",
    "TopicMetadata",
    "TopicPartition",
]

_NO_TOPIC_ID = uuid.UUID(int=0)


class TopicPartition(NamedTuple):
    """One partition of one topic: what producers, consumers and admin calls name."""

    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class BrokerAddress:
    """Where a broker listens, by its node id (and its rack, where it names one)."""

    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """One partition as Metadata describes it: its leader, the leader's epoch and the replicas."""

    partition: int
    leader_id: int
    """-1 while no leader is elected."""
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    error_code: int


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """One topic as Metadata describes it: its id, error code and partitions by number."""

    name: str
    topic_id: uuid.UUID | None
    error_code: int
    partitions: dict[int, PartitionMetadata]


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """One Metadata response, indexed for routing. ``fetched_at`` is ``time.monotonic()``."""

    brokers: dict[int, BrokerAddress]
    topics: dict[str, TopicMetadata]
    controller_id: int
    cluster_id: str | None
    fetched_at: float = field(default_factory=time.monotonic)

    @classmethod
    def from_response(cls, response: Any) -> ClusterMetadata:
        """Index a MetadataResponse of any version (topics without a name are left out)."""
        brokers = {
            b.node_id: BrokerAddress(b.node_id, b.host, b.port, getattr(b, "rack", None))
            for b in response.brokers
        }
        topics = {}
        for t in response.topics:
            if t.name is None:
                continue
            partitions = {
                p.partition_index: PartitionMetadata(
                    partition=p.partition_index,
                    leader_id=p.leader_id,
                    leader_epoch=getattr(p, "leader_epoch", -1),
                    replicas=tuple(p.replica_nodes),
                    isr=tuple(p.isr_nodes),
                    error_code=p.error_code,
                )
                for p in t.partitions
            }
            topic_id = getattr(t, "topic_id", None)
            topics[t.name] = TopicMetadata(
                name=t.name,
                topic_id=None if topic_id in (None, _NO_TOPIC_ID) else topic_id,
                error_code=t.error_code,
                partitions=partitions,
            )
        return cls(
            brokers=brokers,
            topics=topics,
            controller_id=getattr(response, "controller_id", -1),
            cluster_id=getattr(response, "cluster_id", None),
        )

    def age(self) -> float:
        """Seconds since this metadata was fetched."""
        return time.monotonic() - self.fetched_at

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        """The name of the topic with ``topic_id``, or ``None`` if no known topic has it."""
        return next((t.name for t in self.topics.values() if t.topic_id == topic_id), None)

    def leader_for(self, topic: str, partition: int) -> int:
        """The node id leading ``topic``/``partition``.

        Raises a retriable error while the topic is unknown or the partition has no leader,
        and :class:`InvalidPartitionError` for a partition the topic does not have.
        """
        info = self.topics.get(topic)
        if info is None:
            raise UnknownTopicOrPartitionError(f"topic {topic!r} is not in the metadata")
        error = error_for_code(info.error_code, f"metadata for topic {topic!r}")
        if error is not None:
            raise error
        if partition not in info.partitions:
            count = len(info.partitions)
            raise InvalidPartitionError(
                f"topic {topic!r} has {count} partitions (0-{count - 1}): "
                f"partition {partition} does not exist"
            )
        leader = info.partitions[partition].leader_id
        if leader < 0 or leader not in self.brokers:
            raise LeaderNotAvailableError(f"{topic}/{partition} has no leader right now")
        return leader

    def leader_epoch(self, topic: str, partition: int) -> int:
        """The leader epoch of ``topic``/``partition`` (-1 when unknown: an old Metadata version,
        or a partition the metadata does not name)."""
        info = self.topics.get(topic)
        found = info.partitions.get(partition) if info is not None else None
        return found.leader_epoch if found is not None else -1

    def with_leaders(
        self, leaders: Mapping[TopicPartition, tuple[int, int]], brokers: Iterable[BrokerAddress]
    ) -> tuple[ClusterMetadata, set[TopicPartition]]:
        """This metadata with the leaders an answer named (``(node id, leader epoch)`` per
        partition, KIP-951's hints) and the partitions that took them: a hint is taken only
        for a partition this metadata has, at an epoch newer than its own, led by a broker
        known here or among ``brokers`` (the answer's endpoints, added when new; a known
        broker keeps its address). As Java's ``Metadata.updatePartitionLeadership``; it keeps
        ``fetched_at`` (the cache still ages)."""
        known = dict(self.brokers)
        for broker in brokers:
            known.setdefault(broker.node_id, broker)
        topics = dict(self.topics)
        moved: set[TopicPartition] = set()
        for tp, (leader, epoch) in leaders.items():
            topic = topics.get(tp.topic)
            current = topic.partitions.get(tp.partition) if topic is not None else None
            if topic is None or current is None or leader not in known:
                continue
            if epoch < 0 or epoch <= current.leader_epoch:
                continue
            partitions = dict(topic.partitions)
            partitions[tp.partition] = dataclasses.replace(
                current, leader_id=leader, leader_epoch=epoch
            )
            topics[tp.topic] = dataclasses.replace(topic, partitions=partitions)
            moved.add(tp)
        if not moved:
            return self, moved
        led = {leader for tp, (leader, _) in leaders.items() if tp in moved}
        brokers_now = {**self.brokers, **{n: known[n] for n in led if n not in self.brokers}}
        return dataclasses.replace(self, brokers=brokers_now, topics=topics), moved
