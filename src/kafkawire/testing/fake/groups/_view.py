"""What the group coordinator needs of the fake cluster around it, and nothing more.

The cluster core implements both protocols (structurally: no import of this module needed). The
coordinator only reads through them: topics come and go in the cluster, and the coordinator
sees the change at its next look (a KIP-848 group bumps its epoch when a topic it subscribes to
appears, grows or goes).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Protocol

__all__ = ["ClusterView", "GroupSettings"]


class ClusterView(Protocol):
    """The cluster as the group coordinator reads it."""

    def topics(self) -> Mapping[str, tuple[uuid.UUID, int]]:
        """Every topic: name -> (topic id, partition count)."""
        ...

    def coordinator_for(self, group_id: str) -> int:
        """The node id that coordinates ``group_id``."""
        ...

    def now(self) -> float:
        """The clock every group timer reads, in seconds (``time.monotonic`` unless a test
        drives a :class:`ManualClock`)."""
        ...

    def node_ids(self) -> Sequence[int]:
        """The nodes of the cluster."""
        ...


class GroupSettings(Protocol):
    """The fake cluster's settings the coordinator reads (by name; the core's frozen config)."""

    @property
    def group_initial_rebalance_delay_ms(self) -> int:
        """How long a new classic group waits for more members (Kafka's default is 3000)."""
        ...

    @property
    def group_min_session_timeout_ms(self) -> int:
        """The shortest classic session timeout a JoinGroup may ask for (Kafka: 6000)."""
        ...

    @property
    def group_max_session_timeout_ms(self) -> int:
        """The longest classic session timeout a JoinGroup may ask for (Kafka: 1800000)."""
        ...

    @property
    def consumer_group_heartbeat_interval_ms(self) -> int:
        """The heartbeat interval KIP-848 members are told (Kafka: 5000)."""
        ...

    @property
    def consumer_group_session_timeout_ms(self) -> int:
        """How long a KIP-848 member lives without a heartbeat (Kafka: 45000)."""
        ...
