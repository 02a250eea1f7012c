"""What KIP-848 consumer groups and KIP-932 share groups do alike: when the group epoch moves
on, and when the target assignment is computed again.

The group epoch moves on when a member's subscription changes, when what the members'
subscriptions resolve to in the cluster changes (a topic appears, grows or goes), or when a
member joins or leaves. A target assignment older than the group epoch is computed again at
the next heartbeat.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Generic, Protocol, TypeVar

from kafkawire.testing.fake.clock import Timers
from kafkawire.testing.fake.config import FakeConfig
from kafkawire.testing.fake.view import ClusterView

__all__ = ["Heartbeats", "ModernGroup", "by_topic", "member_left", "refresh_epoch"]

logger = logging.getLogger(__name__)

Topics = Mapping[str, tuple[uuid.UUID, int]]


class ModernGroup(Protocol):
    group_id: str
    group_epoch: int
    assignment_epoch: int
    subscription_metadata: dict[str, tuple[uuid.UUID, int]]

    def compute_subscription_metadata(self, topics: Topics) -> dict[str, tuple[uuid.UUID, int]]:
        """What the members' subscriptions resolve to in ``topics`` now."""
        ...

    def update_target_assignment(self) -> None:
        """Compute every member's target at the group epoch."""
        ...


G = TypeVar("G")


class Heartbeats(Generic[G]):
    """What a heartbeat API of the coordinator works with: the cluster, the settings, the
    timers, and how to find (or create) a group of its kind by id."""

    def __init__(
        self,
        cluster: ClusterView,
        settings: FakeConfig,
        timers: Timers,
        group_for: Callable[[str, bool], G],
    ) -> None:
        self._cluster = cluster
        self._settings = settings
        self._timers = timers
        self._group_for = group_for


def refresh_epoch(group: ModernGroup, topics: Topics, *, subscription_changed: bool) -> None:
    """After a heartbeat updated a member: move the group epoch on if the subscriptions or what
    they resolve to changed, and compute the target again if it is behind."""
    bump = subscription_changed
    metadata = group.compute_subscription_metadata(topics)
    if metadata != group.subscription_metadata:
        group.subscription_metadata = metadata
        bump = True
    if bump:
        group.group_epoch += 1
        logger.info("group %s: epoch %d", group.group_id, group.group_epoch)
    if group.group_epoch > group.assignment_epoch:
        group.update_target_assignment()


def member_left(group: ModernGroup, topics: Topics) -> None:
    """A member was removed: the group epoch moves on (the target follows at the next
    heartbeat)."""
    group.subscription_metadata = group.compute_subscription_metadata(topics)
    group.group_epoch += 1


def by_topic(partitions: Iterable[tuple[uuid.UUID, int]]) -> dict[uuid.UUID, list[int]]:
    """(topic id, partition) pairs grouped by topic id, in order."""
    grouped: dict[uuid.UUID, list[int]] = {}
    for topic_id, partition in sorted(partitions):
        grouped.setdefault(topic_id, []).append(partition)
    return grouped
