"""The group coordinator of kafkawire's fake Kafka cluster (``kafkawire.testing.fake``).

Classic groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), KIP-848 groups
(ConsumerGroupHeartbeat, ConsumerGroupDescribe), committed offsets (OffsetCommit, OffsetFetch,
OffsetDelete, and the offsets of committed transactions) and group administration
(DescribeGroups, ListGroups, DeleteGroups), in memory, by Kafka's rules, at every version
kafkawire knows. The cluster core routes group requests to :class:`GroupCoordinator`; the
coordinator reads the cluster only through :class:`~kafkawire.testing.fake.view.ClusterView`
and its settings from :class:`~kafkawire.testing.fake.config.FakeConfig` (an import-linter
contract holds that seam). Its timers run on the cluster's clock
(:mod:`kafkawire.testing.fake.clock`).
"""

from ._coordinator import GroupCoordinator

__all__ = ["GroupCoordinator"]
