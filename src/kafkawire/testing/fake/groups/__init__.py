"""The group coordinator of kafkawire's fake Kafka cluster (``kafkawire.testing.fake``).

Classic groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), KIP-848 groups
(ConsumerGroupHeartbeat, ConsumerGroupDescribe), committed offsets (OffsetCommit, OffsetFetch,
OffsetDelete, and the offsets of committed transactions) and group administration
(DescribeGroups, ListGroups, DeleteGroups), in memory, by Kafka's rules, at every version
kafkawire knows. The cluster core routes group requests to :class:`GroupCoordinator`; a test
drives time with :class:`ManualClock`.
"""

from ._coordinator import GroupCoordinator
from ._timers import ManualClock, Timers
from ._view import ClusterView, GroupSettings

__all__ = ["ClusterView", "GroupCoordinator", "GroupSettings", "ManualClock", "Timers"]
