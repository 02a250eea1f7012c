"""What a group coordinator may read of the cluster: the seam between the fake and its groups.

A small read-only protocol, so that the group coordinator (``kafkawire.testing.fake.groups``)
depends on nothing else of the fake (an import-linter contract holds it to this, the config
and the clock). The cluster's state implements it. The coordinator reads through it at each
look: topics come and go in the cluster, and a KIP-848 group bumps its epoch when a topic it
subscribes to appears, grows or goes.

Share groups' partition state lives with the partitions' leaders (the share package); the
coordinator reaches it through :class:`ShareStateView`, as Kafka's reaches the share
coordinator.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["ClusterView", "ShareStartOffset", "ShareStateView"]


class ClusterView(Protocol):
    """What the group coordinator may read of the cluster: its topics, which broker coordinates
    a group, the brokers running and its clock."""

    def topics(self) -> Mapping[str, tuple[uuid.UUID, int]]:
        """Every topic but the internal ones: name -> (topic id, number of partitions)."""
        ...

    def coordinator_for(self, group_id: str) -> int:
        """The node id that coordinates ``group_id`` (``-1`` if no broker runs)."""
        ...

    def now(self) -> float:
        """The cluster's clock in seconds: ``time.monotonic``, or the test's
        :class:`~kafkawire.testing.fake.clock.ManualClock`."""
        ...

    def node_ids(self) -> Sequence[int]:
        """The node ids of the brokers running now."""
        ...

    def pending_transactional_offsets(self, group_id: str) -> frozenset[tuple[str, int]]:
        """The partitions with offsets that an open transaction committed to ``group_id``
        (TxnOffsetCommit before EndTxn): OffsetFetch with ``require_stable`` answers
        UNSTABLE_OFFSET_COMMIT for them."""
        ...


@dataclass(frozen=True, slots=True)
class ShareStartOffset:
    """Where a share group stands in one partition: its start offset (SPSO), the leader epoch
    it was last loaded at, and its lag (KIP-1226: the records from the start to the high
    watermark not yet acknowledged or archived)."""

    start_offset: int
    leader_epoch: int
    lag: int


class ShareStateView(Protocol):
    """What the group coordinator reads and changes of share groups' partition state (what
    Kafka's coordinator asks of the share coordinator): the share package implements it."""

    def share_start_offsets(
        self, group_id: str
    ) -> Mapping[tuple[uuid.UUID, int], ShareStartOffset]:
        """Every partition ``group_id`` has share state for: (topic id, partition) -> where it
        stands."""
        ...

    def set_share_start_offsets(
        self, group_id: str, offsets: Mapping[tuple[uuid.UUID, int], int]
    ) -> None:
        """Start ``group_id`` at these offsets, forgetting what was in flight there."""
        ...

    def delete_share_states(self, group_id: str, topic_ids: Collection[uuid.UUID] | None) -> None:
        """Forget ``group_id``'s state of these topics (None: of every topic); the next fetch
        starts it again by ``share.auto.offset.reset``."""
        ...
