"""What a group coordinator may read of the cluster: the seam between the fake and its groups.

A small read-only protocol, so that the group coordinator (``kafkawire.testing.fake.groups``)
depends on nothing else of the fake (an import-linter contract holds it to this, the config
and the clock). The cluster's state implements it. The coordinator reads through it at each
look: topics come and go in the cluster, and a KIP-848 group bumps its epoch when a topic it
subscribes to appears, grows or goes.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Protocol

__all__ = ["ClusterView"]


class ClusterView(Protocol):
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
