"""An in-memory fake Kafka cluster for tests, yours and ours (as franz-go's kfake is for Go).

``FakeCluster`` starts brokers on loopback ports that speak Kafka's protocol, keep topics and
partitions with logs, and answer by Kafka's rules: produce with idempotence and transactions,
fetch with sessions, leader epochs and long polls, offsets, topics, configs, coordinators, and
the group APIs of :mod:`.groups`, and share groups (KIP-932: :mod:`.share` on the partitions'
leaders, membership in :mod:`.groups`). Hooks script any answer (errors, delays, cut connections)
for fault tests (ready-made ones in :mod:`.faults`); ``requests`` records what clients sent; a
:class:`ManualClock` moves the cluster's time by hand.

Module map: ``cluster`` (the facade), ``config``, ``broker`` and ``connection`` (sockets, the
order of answers), ``hooks`` and ``faults`` (ready-made hooks), ``request_log``, ``state``
(brokers, topics, leaders), ``log`` with ``producer_state`` and ``batch_check`` (one
partition's records), ``fetch_sessions``,
``transactions``, ``share`` (share partitions, their locks, share sessions),
``group_configs``, ``handlers`` (one module per API or family), ``view`` and ``groups`` (the
seam to the group coordinator), ``clock`` (timers and the hand-driven clock), ``thread`` (a
cluster on a loop of its own, for synchronous code), ``build`` (responses at any version),
``codes``.
"""

from .clock import ManualClock
from .cluster import FakeCluster, FakeClusterError, PartitionOffsets
from .codes import Error
from .config import FakeConfig
from .hooks import CUT, DROP, Action, Hook, HookContext
from .request_log import ReceivedRequest, RequestLog
from .share import InFlightRecord, RecordState, SharePartitionState
from .thread import FakeClusterThread
from .view import ClusterView

__all__ = [
    "CUT",
    "DROP",
    "Action",
    "ClusterView",
    "Error",
    "FakeCluster",
    "FakeClusterError",
    "FakeClusterThread",
    "FakeConfig",
    "Hook",
    "HookContext",
    "InFlightRecord",
    "ManualClock",
    "PartitionOffsets",
    "ReceivedRequest",
    "RecordState",
    "RequestLog",
    "SharePartitionState",
]
