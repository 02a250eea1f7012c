"""``FakeCluster``: an in-memory Kafka cluster on loopback ports, for tests (as kfake is for Go).

::

    async with FakeCluster(num_brokers=3) as cluster:
        cluster.create_topic("orders", partitions=3)
        async with Producer(cluster.bootstrap) as producer: ...

Each broker is an asyncio server on 127.0.0.1 (a port of its own, kept across a stop and a
start); they share one state (:mod:`.state`) and answer every API in :mod:`.handlers`, plus
the group APIs of the group coordinator (:mod:`.groups`), at the versions the config serves.
What a test may do besides connecting:

- set up and inspect: ``create_topic``, ``delete_topic``, ``produce`` (records appended as if
  produced), ``records``, ``offsets``, ``leader``;
- move the cluster: ``move_leader`` (a new leader and epoch), ``truncate`` (an unclean leader
  election that lost the log's tail), ``delete_records``, ``stop_broker`` / ``start_broker``,
  ``cut_connections``;
- script answers: ``control`` (:mod:`.hooks`), and read what was asked: ``requests``
  (:mod:`.request_log`);
- move time: ``FakeCluster(clock=ManualClock())`` and ``clock.advance(seconds)``
  (:mod:`.clock`); without a clock, timers run on real time (session timeouts, rebalances,
  transactions and share groups' record locks alike);
- share groups: ``set_group_config`` (``share.auto.offset.reset``, ``share.record.lock
  .duration.ms``: :mod:`.group_configs`), ``share_partition`` (a share partition's start, end
  and in-flight records);
- client metrics (KIP-714, with ``client_telemetry=True``): ``telemetry.set_subscription``
  and the ``telemetry.pushes`` clients sent (:mod:`.telemetry`).

Everything runs on the event loop that entered the cluster; the set-up methods are plain
(synchronous) calls on that loop, the ones that wait on sockets are coroutines. A handler or
hook that raises fails the test: the cluster raises the first such error when it closes.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.messages import APIS
from kafkawire.records import Record, RecordBatch, RecordBatchBuilder, decode_batches

from .broker import HOST, BrokerServer
from .call import Handler
from .clock import ManualClock
from .config import FakeConfig
from .fetch_sessions import FetchSessionCache
from .group_configs import group_config_problem
from .groups import GroupCoordinator
from .handlers import HANDLERS, group_handler
from .hooks import Hook, HookFunction, Hooks
from .request_log import RequestLog, api_key_of
from .services import Services
from .share import SharePartitions, SharePartitionState
from .state import ClusterState, Partition, Topic, invalid_topic_name
from .telemetry import TELEMETRY_APIS, ClientMetrics
from .topic_configs import unknown_keys
from .transactions import TransactionCoordinator

__all__ = ["FakeCluster", "FakeClusterError", "PartitionOffsets"]

RecordValue = bytes | None | tuple[bytes | None, bytes | None]


class FakeClusterError(Exception):
    """A handler or hook of the fake cluster raised (the first such error is its cause)."""


@dataclass(frozen=True)
class PartitionOffsets:
    """A partition's log start offset, last stable offset and high watermark."""

    log_start_offset: int
    last_stable_offset: int
    high_watermark: int


def served_versions(config: FakeConfig) -> dict[int, range]:
    """The versions served of each API: the handler's or the group coordinator's, within
    kafkawire's, or the config's."""
    implemented = {key: entry.versions for key, entry in HANDLERS.items()}
    implemented.update(GroupCoordinator.VERSIONS)
    served: dict[int, range] = {}
    for key, versions in implemented.items():
        known = APIS[key].versions
        served[key] = range(max(known.start, versions.start), min(known.stop, versions.stop))
    if not config.client_telemetry:  # as a Kafka broker without a telemetry exporter
        for key in TELEMETRY_APIS:
            served.pop(key, None)
    for key, versions in config.api_versions.items():
        if key not in served:
            raise ValueError(f"FakeConfig.api_versions: the fake does not serve API key {key}")
        served[key] = versions
    return {key: versions for key, versions in served.items() if versions}


class FakeCluster:
    """An in-memory Kafka cluster; ``async with`` starts and stops it (module docstring)."""

    def __init__(
        self,
        num_brokers: int | None = None,
        *,
        config: FakeConfig | None = None,
        clock: ManualClock | None = None,
        **settings: Any,
    ) -> None:
        config = config or FakeConfig()
        if num_brokers is not None:
            settings["num_brokers"] = num_brokers
        self.config = config.replace(**settings) if settings else config
        now = time.monotonic if clock is None else clock.now
        self.state = ClusterState(self.config, now)
        shares = SharePartitions(self.state, self.config)
        groups = GroupCoordinator(self.state, self.config, shares)
        transactions = TransactionCoordinator(self.state, groups.commit_offsets)
        self.state.pending_offsets = transactions.pending_offsets
        if clock is not None:
            clock.attach(groups.timers)
            clock.attach(transactions.timers)
            clock.attach(shares.timers)
        self.services = Services(
            self.state,
            transactions,
            groups,
            {
                node: FetchSessionCache(
                    self.config.fetch_session_cache_slots,
                    self.config.fetch_session_eviction_ms,
                    now,
                )
                for node in self.state.brokers
            },
            shares,
            served_versions(self.config),
            ClientMetrics(self.config),
        )
        self.brokers = {node: BrokerServer(self, node) for node in self.state.brokers}
        self.hooks = Hooks()
        self.requests = RequestLog()
        self.errors: list[Exception] = []

    # -- life ----------------------------------------------------------------------------------

    async def __aenter__(self) -> FakeCluster:
        try:
            for node in self.brokers:
                await self.start_broker(node)
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, exc_type: object, *exc_info: object) -> None:
        await self.close()
        failures = [*self.errors, *self.hooks.errors]
        if failures and exc_type is None:
            raise FakeClusterError(
                f"{len(failures)} handler or hook error(s) in the fake cluster; the first: "
                f"{failures[0]!r}"
            ) from failures[0]

    async def close(self) -> None:
        """Stop every broker and the coordinators' timers (``async with`` calls it)."""
        for broker in self.brokers.values():
            await broker.stop()
        self.services.transactions.close()
        self.services.groups.close()
        self.services.shares.close()

    @property
    def bootstrap(self) -> str:
        """``"127.0.0.1:port,..."``: every broker, for a client's bootstrap servers."""
        return ",".join(self.address(node) for node in self.brokers)

    def address(self, node_id: int) -> str:
        """``"127.0.0.1:port"`` of the broker ``node_id``."""
        return f"{HOST}:{self._broker(node_id).port}"

    @property
    def telemetry(self) -> ClientMetrics:
        """Client metrics (KIP-714, with ``client_telemetry=True``): ``set_subscription``,
        ``remove_subscription``, and the ``pushes`` received (:mod:`.telemetry`)."""
        return self.services.telemetry

    @property
    def served(self) -> Mapping[int, range]:
        """The versions served of each API key."""
        return self.services.served

    def handler_for(self, api_key: int) -> Handler:
        """The handler that answers requests of ``api_key`` (the group APIs: the group
        coordinator's)."""
        if api_key in self.services.groups.API_KEYS:
            return group_handler
        return HANDLERS[api_key].handler

    # -- hooks ---------------------------------------------------------------------------------

    def control(
        self, function: HookFunction, *, api_key: int | str | None = None, keep: bool = False
    ) -> Hook:
        """Put ``function(request, ctx)`` before the handlers (of one API, by key or name);
        see :mod:`kafkawire.testing.fake.hooks` for what it may return."""
        key = None if api_key is None else api_key_of(api_key)
        return self.hooks.add(function, key, keep)

    # -- topics --------------------------------------------------------------------------------

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        *,
        replication_factor: int = -1,
        configs: Mapping[str, str] | None = None,
    ) -> uuid.UUID:
        """Create a topic at once (as CreateTopics would; ValueError where it would refuse);
        its topic id. ``replication_factor`` -1: the config's default, capped by the brokers."""
        problem = invalid_topic_name(name)
        if problem is None and name in self.state.by_name:
            problem = f"topic {name!r} already exists"
        if problem is None and partitions < 1:
            problem = f"a topic needs at least one partition, not {partitions}"
        if problem is None and self.state.replication_factor(replication_factor) > len(
            self.brokers
        ):
            problem = f"replication factor {replication_factor} exceeds {len(self.brokers)} brokers"
        if problem is None and configs and unknown_keys(configs):
            problem = f"unknown topic configs {unknown_keys(configs)}"
        if problem is not None:
            raise ValueError(f"create_topic: {problem}")
        topic = self.state.create_topic(
            name, partitions, replication_factor=replication_factor, configs=configs
        )
        return topic.topic_id

    def delete_topic(self, name: str) -> None:
        """Delete the topic ``name`` and its partitions' logs, as DeleteTopics does."""
        self.state.delete_topic(self._topic(name))

    def topic_id(self, name: str) -> uuid.UUID:
        """The id of the topic ``name``."""
        return self._topic(name).topic_id

    def leader(self, topic: str, partition: int) -> tuple[int, int]:
        """(leader node id, leader epoch) of a partition."""
        found = self._partition(topic, partition)
        return found.leader, found.leader_epoch

    def move_leader(self, topic: str, partition: int, node_id: int) -> int:
        """Make ``node_id`` the partition's leader (a replica if it was not); the new epoch."""
        found = self._partition(topic, partition)
        self._broker(node_id)
        if node_id not in found.replicas:
            found.replicas.append(node_id)
        self.state.set_leader(found, node_id)
        return found.leader_epoch

    def truncate(
        self, topic: str, partition: int, offset: int, *, leader: int | None = None
    ) -> int:
        """An unclean leader election: the new leader (``leader``, or the current one) has the
        log only up to ``offset`` (cut at a batch boundary, as Kafka truncates). Consumers that
        read past it see their epoch diverge (KIP-320). The new epoch."""
        found = self._partition(topic, partition)
        found.log.truncate(offset)
        return self.move_leader(topic, partition, found.leader if leader is None else leader)

    def delete_records(self, topic: str, partition: int, offset: int) -> int:
        """Move the log start offset up to ``offset`` (DeleteRecords); the new log start."""
        log = self._partition(topic, partition).log
        if not 0 <= offset <= log.high_watermark:
            raise ValueError(
                f"delete_records: offset {offset} is outside [0, {log.high_watermark}] of "
                f"{topic}-{partition}"
            )
        log.delete_before(offset)
        self.state.changes.notify()
        return log.log_start_offset

    def add_partitions(self, topic: str, count: int) -> None:
        """Grow ``topic`` to ``count`` partitions, as CreatePartitions would (groups
        subscribed to it see a new epoch at their next heartbeat)."""
        found = self._topic(topic)
        if count <= len(found.partitions):
            raise ValueError(
                f"add_partitions: {topic} has {len(found.partitions)} partitions; {count} is "
                "not more"
            )
        self.state.add_partitions(found, count)

    # -- records -------------------------------------------------------------------------------

    def produce(
        self,
        topic: str,
        partition: int,
        values: Iterable[RecordValue],
        *,
        timestamp: int | None = None,
    ) -> int:
        """Append records as one batch, as if produced (no producer id); its base offset.
        A value is ``bytes`` or None, or a ``(key, value)`` pair."""
        found = self._partition(topic, partition)
        builder = RecordBatchBuilder()
        now = int(time.time() * 1000) if timestamp is None else timestamp
        for value in values:
            key, data = value if isinstance(value, tuple) else (None, value)
            builder.append(key, data, timestamp=now)
        raw = builder.build()
        (batch,) = decode_batches(raw)
        assert isinstance(batch, RecordBatch)
        appended = found.log.append(batch, raw, found.leader_epoch)
        self.state.changes.notify()
        return appended.base_offset

    def write_batches(self, topic: str, partition: int, *batches: bytes) -> None:
        """Append encoded v2 batches to a partition's log as they are: not checked, not
        stamped, at the offsets they carry (each at or after the log end offset). For what a
        broker serves from its log without looking (a bad crc, a decompression bomb, a header
        whose offsets disagree with its records): a consumer's tests of data no producer
        path of the fake would write. The log ends after the last offset a batch's header or
        records name."""
        log = self._partition(topic, partition).log
        for raw in batches:
            found = list(decode_batches(raw, check_crcs=False, max_decompressed_size=1 << 30))
            if len(found) != 1 or not isinstance(found[0], RecordBatch):
                raise ValueError("write_batches: each argument must be one v2 record batch")
            log.append_unchecked(found[0], raw)
        self.state.changes.notify()

    def records(self, topic: str, partition: int) -> list[Record]:
        """The data records of a partition's log from its start (markers left out)."""
        log = self._partition(topic, partition).log
        return [
            record
            for stored in log.batches
            if stored.marker is None
            for batch in decode_batches(stored.data)
            for record in batch.records
            if record.offset >= log.log_start_offset
        ]

    def offsets(self, topic: str, partition: int) -> PartitionOffsets:
        """The partition's log start offset, last stable offset and high watermark now."""
        log = self._partition(topic, partition).log
        return PartitionOffsets(log.log_start_offset, log.last_stable_offset, log.high_watermark)

    # -- share groups --------------------------------------------------------------------------

    def set_group_config(self, group_id: str, key: str, value: str | None) -> None:
        """Set a group config (as IncrementalAlterConfigs on the GROUP resource would; None
        deletes it): ``cluster.set_group_config("workers", "share.auto.offset.reset",
        "earliest")``. ValueError where Kafka answers INVALID_CONFIG."""
        configs = dict(self.state.group_configs.get(group_id, {}))
        if value is None:
            configs.pop(key, None)
        else:
            configs[key] = value
        problem = group_config_problem(self.config, configs)
        if problem is not None:
            raise ValueError(f"set_group_config: {problem}")
        self.state.group_configs[group_id] = configs

    def share_partition(
        self, group_id: str, topic: str, partition: int
    ) -> SharePartitionState | None:
        """Where share group ``group_id`` stands in a partition (None before its first fetch
        there): start and end offsets, and each in-flight record's state, delivery count and
        member."""
        found = self._partition(topic, partition)
        share = self.services.shares.get(group_id, self._topic(topic).topic_id, found.index)
        return None if share is None else share.snapshot()

    # -- brokers -------------------------------------------------------------------------------

    async def stop_broker(self, node_id: int) -> None:
        """Stop a broker: its listener and connections close, and the partitions it led move
        to their next running replica (as Kafka's controller moves them)."""
        await self._broker(node_id).stop()
        self.state.brokers[node_id].running = False
        self.state.broker_stopped(node_id)

    async def start_broker(self, node_id: int) -> None:
        """Start a broker again, on the port it had."""
        broker = self._broker(node_id)
        if broker.running:
            return
        await broker.start()
        info = self.state.brokers[node_id]
        info.port, info.running = broker.port, True
        self.state.broker_started(node_id)

    async def cut_connections(self, node_id: int | None = None) -> None:
        """Close the client connections of one broker (or all); the brokers keep listening."""
        for node, broker in self.brokers.items():
            if node_id is None or node == node_id:
                await broker.cut()

    def evict_fetch_sessions(self, node_id: int | None = None) -> None:
        """Forget the fetch sessions of one broker (or all), as a cache that evicted them: the
        next incremental fetch on one is answered FETCH_SESSION_ID_NOT_FOUND."""
        for node, cache in self.services.fetch_sessions.items():
            if node_id is None or node == node_id:
                cache.sessions.clear()

    def coordinator(self, key: str) -> int:
        """The node that coordinates the group or transactional id ``key`` now."""
        return self.state.coordinator_for(key)

    def move_coordinator(self, key: str, node_id: int) -> None:
        """Make ``node_id`` the coordinator of the group or transactional id ``key`` (as its
        partition of ``__consumer_offsets`` or ``__transaction_state`` moving there, its state
        loaded as it was); the others answer NOT_COORDINATOR for it from now on."""
        self._broker(node_id)
        self.state.coordinators[key] = node_id

    # -- lookups -------------------------------------------------------------------------------

    def _broker(self, node_id: int) -> BrokerServer:
        try:
            return self.brokers[node_id]
        except KeyError:
            raise ValueError(
                f"no broker has node id {node_id} (the ids are {sorted(self.brokers)})"
            ) from None

    def _topic(self, name: str) -> Topic:
        try:
            return self.state.by_name[name]
        except KeyError:
            raise ValueError(f"no topic is named {name!r}") from None

    def _partition(self, topic: str, partition: int) -> Partition:
        found = self.state.partition(topic, partition)
        if found is None:
            raise ValueError(f"no partition {topic}-{partition}")
        return found
