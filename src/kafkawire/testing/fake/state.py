"""The cluster's state that every broker shares: brokers, topics, partitions, leaders, the clock.

One object, mutated only from the event loop, so a handler sees a consistent cluster between
its awaits. What a real cluster spreads over a controller and each broker's metadata cache is
one view here: every broker knows every leader and epoch at once (as if metadata propagated
instantly), and every replica is in sync.

Leadership follows Kafka's controller: a topic's partitions get leaders round-robin over the
brokers (the replicas follow the leader in node order); a leader that stops hands its
partitions to the next running replica with the epoch raised (or to none: leader -1, and
LEADER_NOT_AVAILABLE); a broker that comes back takes the partitions left without a leader.
Each new leadership starts an epoch in the partition's log at its end offset.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from .changes import Changes
from .config import FakeConfig
from .log import PartitionLog

__all__ = [
    "INTERNAL_TOPICS",
    "Broker",
    "ClusterState",
    "Partition",
    "Topic",
    "invalid_topic_name",
    "java_hash",
]

NO_LEADER = -1
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_TOPIC_LENGTH = 249
# __consumer_offsets and __transaction_state: 50 partitions each by default.
_COORDINATOR_PARTITIONS = 50
# The fake keeps no logs for them, but a client may create topics by these names: Metadata
# calls them internal, and groups do not see them (a KIP-848 regex never matches them).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


@dataclass
class Partition:
    topic: str
    index: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    log: PartitionLog


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, str] = field(default_factory=dict)


@dataclass
class Broker:
    node_id: int
    host: str = "127.0.0.1"
    port: int = 0
    running: bool = False


def invalid_topic_name(name: str) -> str | None:
    """Why Kafka refuses ``name`` as a topic name, or None if it is legal."""
    if name in ("", ".", ".."):
        return f"topic name {name!r} is illegal"
    if len(name) > _MAX_TOPIC_LENGTH:
        return f"topic name is longer than {_MAX_TOPIC_LENGTH} characters"
    if not _LEGAL_TOPIC.fullmatch(name):
        return f"topic name {name!r} has characters other than ASCII alphanumerics, '.', '_', '-'"
    return None


def java_hash(text: str) -> int:
    """Java's ``String.hashCode`` of ``text``, as Kafka hashes group and transactional ids."""
    data = text.encode("utf-16-be")
    value = 0
    for i in range(0, len(data), 2):
        value = (31 * value + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _java_abs(value: int) -> int:
    """Kafka's ``Utils.abs``: ``Math.abs`` with ``Integer.MIN_VALUE`` taken as 0."""
    return 0 if value == -(1 << 31) else abs(value)


class ClusterState:
    """Brokers, topics and partitions; also the :class:`ClusterView` group coordinators read."""

    def __init__(self, config: FakeConfig, clock: Callable[[], float]) -> None:
        self.config = config
        self.clock = clock
        self.brokers = {node: Broker(node) for node in range(config.num_brokers)}
        self.by_name: dict[str, Topic] = {}
        self.by_id: dict[uuid.UUID, Topic] = {}
        self.changes = Changes()
        # Group configs by group id (Kafka's GroupConfigManager): :mod:`.group_configs`.
        self.group_configs: dict[str, dict[str, str]] = {}
        # Coordinators a test moved (``FakeCluster.move_coordinator``), by group or
        # transactional id; the others follow the hash below.
        self.coordinators: dict[str, int] = {}
        self._next_leader = 0
        # Set by the cluster to the transaction coordinator's (which is built after this).
        self.pending_offsets: Callable[[str], frozenset[tuple[str, int]]] = lambda group: (
            frozenset()
        )

    # -- ClusterView ---------------------------------------------------------------------------

    def now(self) -> float:
        return self.clock()

    def node_ids(self) -> list[int]:
        return [node for node, broker in self.brokers.items() if broker.running]

    def topics(self) -> dict[str, tuple[uuid.UUID, int]]:
        return {
            name: (t.topic_id, len(t.partitions))
            for name, t in self.by_name.items()
            if name not in INTERNAL_TOPICS
        }

    def pending_transactional_offsets(self, group_id: str) -> frozenset[tuple[str, int]]:
        return self.pending_offsets(group_id)

    def coordinator_for(self, key: str) -> int:
        """The node that coordinates a group or transactional id: the leader of its partition
        of the coordinator's topic (Kafka's ``abs(hash) % 50``), moved on past stopped brokers
        as a leader election would; or where a test moved it, while that broker runs."""
        moved = self.coordinators.get(key)
        if moved is not None and self.brokers[moved].running:
            return moved
        nodes = sorted(self.brokers)
        start = _java_abs(java_hash(key)) % _COORDINATOR_PARTITIONS % len(nodes)
        for step in range(len(nodes)):
            node = nodes[(start + step) % len(nodes)]
            if self.brokers[node].running:
                return node
        return NO_LEADER

    # -- topics --------------------------------------------------------------------------------

    def partition(self, topic: str, index: int) -> Partition | None:
        found = self.by_name.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            return None
        return found.partitions[index]

    def partitions(self) -> Iterator[Partition]:
        for topic in self.by_name.values():
            yield from topic.partitions

    def replication_factor(self, asked: int) -> int:
        return (
            asked if asked > 0 else min(self.config.default_replication_factor, len(self.brokers))
        )

    def create_topic(
        self,
        name: str,
        partitions: int,
        *,
        replication_factor: int = -1,
        configs: Mapping[str, str] | None = None,
        assignments: Mapping[int, list[int]] | None = None,
    ) -> Topic:
        """Create a topic (the caller has validated its arguments)."""
        topic = Topic(name, uuid.uuid4(), [], dict(configs or {}))
        self.by_name[name] = topic
        self.by_id[topic.topic_id] = topic
        self._add_partitions(
            topic, partitions, self.replication_factor(replication_factor), assignments
        )
        self.changes.notify()
        return topic

    def add_partitions(
        self, topic: Topic, count: int, assignments: Mapping[int, list[int]] | None = None
    ) -> None:
        """Grow ``topic`` to ``count`` partitions, replicated as its first partition is."""
        factor = len(topic.partitions[0].replicas) if topic.partitions else 1
        self._add_partitions(topic, count, factor, assignments)
        self.changes.notify()

    def _add_partitions(
        self,
        topic: Topic,
        count: int,
        factor: int,
        assignments: Mapping[int, list[int]] | None,
    ) -> None:
        nodes = sorted(self.brokers)
        for index in range(len(topic.partitions), count):
            if assignments is not None and index in assignments:
                replicas = list(assignments[index])
            else:
                first = self._next_leader % len(nodes)
                self._next_leader += 1
                replicas = [nodes[(first + i) % len(nodes)] for i in range(factor)]
            leader = next((n for n in replicas if self.brokers[n].running), replicas[0])
            topic.partitions.append(
                Partition(topic.name, index, leader, 0, replicas, PartitionLog())
            )

    def delete_topic(self, topic: Topic) -> None:
        del self.by_name[topic.name]
        del self.by_id[topic.topic_id]
        self.changes.notify()

    # -- leaders -------------------------------------------------------------------------------

    def set_leader(self, partition: Partition, node_id: int) -> None:
        """A new leadership (or none, ``-1``): the epoch goes up, and starts in the log."""
        partition.leader = node_id
        partition.leader_epoch += 1
        partition.log.assign_epoch(partition.leader_epoch)
        self.changes.notify()

    def broker_stopped(self, node_id: int) -> None:
        """Hand the partitions ``node_id`` led to their next running replica."""
        for partition in self.partitions():
            if partition.leader == node_id:
                successor = next(
                    (n for n in partition.replicas if n != node_id and self.brokers[n].running),
                    NO_LEADER,
                )
                self.set_leader(partition, successor)

    def broker_started(self, node_id: int) -> None:
        """Lead the partitions left without a leader that ``node_id`` holds a replica of."""
        for partition in self.partitions():
            if partition.leader == NO_LEADER and node_id in partition.replicas:
                self.set_leader(partition, node_id)
