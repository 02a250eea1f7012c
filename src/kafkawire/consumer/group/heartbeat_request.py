"""What each ConsumerGroupHeartbeat (KIP-848) carries; no I/O.

Rules, as Kafka's Java client keeps them (its ``HeartbeatState``):

- Group id, member id, member epoch and the static instance id go in every request.
- The rebalance timeout, the subscription, the server assignor and the owned partitions go
  when the member joins (epoch 0: Kafka refuses a join without the rebalance timeout and a
  subscription, and wants the owned partitions as an empty list then), and afterwards only
  when they differ from what the last request carried; null says "unchanged".
- When a request fails (an error answer, a lost connection), nothing counts as sent: the next
  request carries every field again, since the broker may not have seen the last one.
- After a reconciliation the owned partitions go again even if they did not change: that
  request is the member's acknowledgement.
- The subscription goes as topic names. From v1 an empty regex goes with them, as librdkafka
  sends it: librdkafka's mock cluster aborts on names without a regex, and Kafka reads an empty
  regex as none. Version 0 has no regex field.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.consumer.settings import ConsumerSettings
from kafkawire.messages.consumer_group_heartbeat import v1 as heartbeat

__all__ = [
    "LEAVE_EPOCH",
    "LEAVE_STATIC_EPOCH",
    "Assignment",
    "HeartbeatAnswers",
    "HeartbeatFields",
    "new_member_id",
]

LEAVE_EPOCH = -1  # the member leaves the group
LEAVE_STATIC_EPOCH = -2  # a static member leaves for now; it rejoins under its instance id

Owned = Mapping[uuid.UUID, Collection[int]]
Assignment = dict[uuid.UUID, frozenset[int]]  # partitions by topic id, as heartbeats name them


class HeartbeatAnswers:
    """What a heartbeat's answer sets in a member of a KIP-848 consumer group or of a share
    group (ConsumerGroupHeartbeat and ShareGroupHeartbeat answers carry the same fields): its
    member id (when the broker names one), its epoch, the heartbeat interval (the next beat
    comes at the latest one new interval from now), and the target assignment (when one
    came). The member sets these attributes up itself."""

    member_id: str
    epoch: int
    _interval: float  # seconds between heartbeats
    _next_beat: float  # time.monotonic() of the next regular heartbeat
    _target: Assignment | None  # the broker's latest assignment for the member

    def _take_answer(self, response: Any) -> None:
        if response.member_id:
            self.member_id = response.member_id
        self.epoch = response.member_epoch
        if response.heartbeat_interval_ms > 0:
            self._interval = response.heartbeat_interval_ms / 1000
            self._next_beat = min(self._next_beat, time.monotonic() + self._interval)
        if response.assignment is not None:
            self._target = {
                tp.topic_id: frozenset(tp.partitions) for tp in response.assignment.topic_partitions
            }


def new_member_id() -> str:
    """A member id of the member's own making (KIP-1082): a random Kafka ``Uuid`` in Kafka's
    spelling (URL-safe base64 of its 16 bytes, no padding), as the Java client makes it."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")


@dataclass(slots=True)
class _Sent:
    """The optional fields as the last request carried them (``None``: not known)."""

    rebalance_timeout_ms: int | None = None
    topics: tuple[str, ...] | None = None
    server_assignor: str | None = None
    owned: frozenset[tuple[uuid.UUID, int]] | None = None


class HeartbeatFields:
    """Builds each heartbeat of one member from what it is now and what was sent before."""

    def __init__(self, settings: ConsumerSettings) -> None:
        assert settings.group_id is not None
        self._group_id = settings.group_id
        self._instance_id = settings.group_instance_id
        self._rebalance_timeout_ms = settings.max_poll_interval_ms
        self._server_assignor = settings.group_remote_assignor
        self._sent = _Sent()

    def forget(self) -> None:
        """The last request failed, or the member joins again: send every field next time."""
        self._sent = _Sent()

    def acknowledge(self) -> None:
        """Send the owned partitions next time even if unchanged."""
        self._sent.owned = None

    def request(
        self,
        *,
        member_id: str,
        epoch: int,
        topics: Collection[str],
        owned: Owned,
        version: int,
    ) -> heartbeat.ConsumerGroupHeartbeatRequest:
        """The next heartbeat (at v1: send it negotiated, so that v0 drops what v0 lacks)."""
        joining = epoch == 0
        sent = self._sent
        changed: dict[str, Any] = {}
        if joining or sent.rebalance_timeout_ms != self._rebalance_timeout_ms:
            changed["rebalance_timeout_ms"] = sent.rebalance_timeout_ms = self._rebalance_timeout_ms
        subscription = tuple(sorted(topics))
        if joining or sent.topics != subscription:
            changed["subscribed_topic_names"] = sent.topics = subscription
            if version >= 1:
                changed["subscribed_topic_regex"] = ""
        if self._server_assignor is not None and (
            joining or sent.server_assignor != self._server_assignor
        ):
            changed["server_assignor"] = sent.server_assignor = self._server_assignor
        partitions = frozenset((topic_id, p) for topic_id, ps in owned.items() for p in ps)
        if joining or sent.owned != partitions:
            sent.owned = partitions
            changed["topic_partitions"] = tuple(
                heartbeat.ConsumerGroupHeartbeatRequestTopicPartitions(
                    topic_id=topic_id, partitions=tuple(sorted(ps))
                )
                for topic_id, ps in sorted(owned.items())
                if ps
            )
        return heartbeat.ConsumerGroupHeartbeatRequest(
            group_id=self._group_id,
            member_id=member_id,
            member_epoch=epoch,
            instance_id=self._instance_id,
            **changed,
        )

    def leave(self, member_id: str) -> heartbeat.ConsumerGroupHeartbeatRequest:
        """The heartbeat that leaves the group: epoch -1, or -2 for a static member (the
        broker keeps its assignment for the session timeout, for it to rejoin)."""
        self.forget()
        epoch = LEAVE_EPOCH if self._instance_id is None else LEAVE_STATIC_EPOCH
        return heartbeat.ConsumerGroupHeartbeatRequest(
            group_id=self._group_id,
            member_id=member_id,
            member_epoch=epoch,
            instance_id=self._instance_id,
        )
