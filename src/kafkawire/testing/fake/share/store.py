"""Every share partition of the cluster, their locks' timers and the brokers' share sessions.

Kafka keeps a share partition's in-flight records on the partition's leader and persists them
with the share coordinator, so that a new leader picks up where the old one stood. Here one
:class:`SharePartition` per (group, topic id, partition) stands for both: it remembers the
leader epoch it was loaded at, and a leader that finds an older epoch reloads it first (what
was acquired is available again, :meth:`SharePartition.reload`). A share partition is made
by the first fetch that reaches its leader, at the offset ``share.auto.offset.reset`` gives
then (or the one AlterShareGroupOffsets set).

Acquisition locks are timers on the cluster's clock (:mod:`kafkawire.testing.fake.clock`), one
per acquisition or renewal; each offset remembers the lock holding it, so a lock that expires
after the records it held moved on finds nothing to release. Whatever makes records available
again (an expiry, a release, a closed session) wakes the share fetches waiting for records.

This class is also the group coordinator's :class:`~kafkawire.testing.fake.view.ShareStateView`.
"""

from __future__ import annotations

import itertools
import logging
import time
import uuid
from collections.abc import Collection, Iterable, Mapping

from kafkawire.testing.fake.clock import Timers
from kafkawire.testing.fake.config import FakeConfig
from kafkawire.testing.fake.group_configs import (
    AUTO_OFFSET_RESET,
    RECORD_LOCK_DURATION,
    by_duration_ms,
    group_defaults,
)
from kafkawire.testing.fake.state import ClusterState, Partition
from kafkawire.testing.fake.view import ShareStartOffset

from .acquire import Acquisition, FetchLimits, acquirable_bytes, acquire
from .partition import AckBatch, AckFailure, SharePartition
from .sessions import ShareSession, ShareSessionCache

__all__ = ["SharePartitions"]

logger = logging.getLogger(__name__)

Key = tuple[str, uuid.UUID, int]  # (group id, topic id, partition)


class SharePartitions:
    """The cluster's share partitions and share sessions (module docstring)."""

    def __init__(self, state: ClusterState, config: FakeConfig) -> None:
        self._state = state
        self._config = config
        self.timers = Timers(state.now)
        self.sessions = {
            node: ShareSessionCache(config.share_group_max_share_sessions) for node in state.brokers
        }
        self._partitions: dict[Key, SharePartition] = {}
        self._locks = itertools.count(1)

    # -- group configs ------------------------------------------------------------------------

    def group_config(self, group_id: str, key: str) -> str:
        own = self._state.group_configs.get(group_id, {})
        return own.get(key, group_defaults(self._config)[key])

    def lock_duration_ms(self, group_id: str) -> int:
        return int(self.group_config(group_id, RECORD_LOCK_DURATION))

    # -- the leader's view --------------------------------------------------------------------

    def on_leader(self, group_id: str, topic_id: uuid.UUID, partition: Partition) -> SharePartition:
        """The share partition a fetch on ``partition``'s leader reads: made if new (module
        rules), reloaded if its leadership changed."""
        key = (group_id, topic_id, partition.index)
        found = self._partitions.get(key)
        if found is None:
            found = SharePartition(self._initial_start(group_id, partition), partition.leader_epoch)
            self._partitions[key] = found
            logger.info(
                "share group %s: %s-%d starts at %d",
                group_id,
                partition.topic,
                partition.index,
                found.start_offset,
            )
        elif found.leader_epoch != partition.leader_epoch:
            found.reload(partition.leader_epoch)
        return found

    def loaded(
        self, group_id: str, topic_id: uuid.UUID, partition: Partition
    ) -> SharePartition | None:
        """The share partition as its leader has it loaded; None if no fetch loaded it in this
        leadership (Kafka's leader has no such share partition then)."""
        found = self._partitions.get((group_id, topic_id, partition.index))
        if found is None or found.leader_epoch != partition.leader_epoch:
            return None
        return found

    def _initial_start(self, group_id: str, partition: Partition) -> int:
        log = partition.log
        reset = self.group_config(group_id, AUTO_OFFSET_RESET).lower()
        if reset == "earliest":
            return log.log_start_offset
        duration = by_duration_ms(reset)
        if duration is not None:
            since = int(time.time() * 1000) - duration
            found = log.offset_for_timestamp(since, log.high_watermark)
            if found is not None:
                return found[1]
        return log.high_watermark

    # -- acquiring and acknowledging ----------------------------------------------------------

    def acquire(
        self,
        group_id: str,
        member_id: str,
        topic_id: uuid.UUID,
        partition: Partition,
        limits: FetchLimits,
    ) -> Acquisition:
        """Acquire records of ``partition`` for a member, under a new lock."""
        share = self.on_leader(group_id, topic_id, partition)
        lock = next(self._locks)
        acquired = acquire(share, partition.log, member_id, lock, limits)
        if acquired.ranges:
            self._schedule(group_id, share, lock)
        return acquired

    def acquirable(
        self, group_id: str, topic_id: uuid.UUID, partition: Partition, limits: FetchLimits
    ) -> int:
        """About how many bytes :meth:`acquire` would take now."""
        share = self.on_leader(group_id, topic_id, partition)
        return acquirable_bytes(share, partition.log, limits)

    def acknowledge(
        self,
        group_id: str,
        member_id: str,
        share: SharePartition,
        batches: Iterable[AckBatch],
    ) -> AckFailure | None:
        lock = next(self._locks)
        outcome = share.acknowledge(
            member_id, batches, self._config.share_group_delivery_count_limit, lock
        )
        if isinstance(outcome, AckFailure):
            return outcome
        if outcome:
            self._schedule(group_id, share, lock)
        self._state.changes.notify()  # released records may be acquired again
        return None

    def _schedule(self, group_id: str, share: SharePartition, lock: int) -> None:
        limit = self._config.share_group_delivery_count_limit

        def expired() -> None:
            if share.expire(lock, limit):
                self._state.changes.notify()

        self.timers.schedule(("share-lock", lock), self.lock_duration_ms(group_id), expired)

    # -- sessions -----------------------------------------------------------------------------

    def release_session(self, node_id: int, session: ShareSession) -> None:
        """Give back the records the session's member holds on its partitions (on this node)."""
        group_id, member_id = session.key
        limit = self._config.share_group_delivery_count_limit
        released = False
        for topic_id, index in session.partitions:
            topic = self._state.by_id.get(topic_id)
            if topic is None or not 0 <= index < len(topic.partitions):
                continue
            partition = topic.partitions[index]
            share = self.loaded(group_id, topic_id, partition)
            if partition.leader == node_id and share is not None:
                released |= share.release(member_id, limit)
        if released:
            self._state.changes.notify()

    def disconnected(self, node_id: int, connection_id: int) -> None:
        """A client connection closed: the session it opened goes, its records released."""
        cache = self.sessions.get(node_id)
        session = cache.disconnected(connection_id) if cache is not None else None
        if session is not None:
            logger.info(
                "node %d: share session %s closed with its connection", node_id, session.key
            )
            self.release_session(node_id, session)

    def close(self) -> None:
        self.timers.close()

    # -- ShareStateView -----------------------------------------------------------------------

    def share_start_offsets(
        self, group_id: str
    ) -> Mapping[tuple[uuid.UUID, int], ShareStartOffset]:
        found = {}
        for (group, topic_id, index), share in self._partitions.items():
            topic = self._state.by_id.get(topic_id)
            if group != group_id or topic is None or index >= len(topic.partitions):
                continue
            log = topic.partitions[index].log
            share.follow_log_start(log.log_start_offset)
            lag = log.high_watermark - share.start_offset - share.delivery_complete_count()
            found[(topic_id, index)] = ShareStartOffset(
                share.start_offset, share.leader_epoch, max(lag, 0)
            )
        return found

    def set_share_start_offsets(
        self, group_id: str, offsets: Mapping[tuple[uuid.UUID, int], int]
    ) -> None:
        for (topic_id, index), offset in offsets.items():
            topic = self._state.by_id[topic_id]
            epoch = topic.partitions[index].leader_epoch
            self._partitions[(group_id, topic_id, index)] = SharePartition(offset, epoch)

    def delete_share_states(self, group_id: str, topic_ids: Collection[uuid.UUID] | None) -> None:
        for key in [k for k in self._partitions if k[0] == group_id]:
            if topic_ids is None or key[1] in topic_ids:
                del self._partitions[key]

    # -- for tests ----------------------------------------------------------------------------

    def get(self, group_id: str, topic_id: uuid.UUID, index: int) -> SharePartition | None:
        return self._partitions.get((group_id, topic_id, index))
