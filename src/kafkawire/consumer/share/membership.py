"""A share group member's place in its group: ShareGroupHeartbeat (KIP-932) and its states.

The member's state is the consumer's :class:`~kafkawire.consumer.group.member_state.MemberState`
(Java's names), moving by :data:`SHARE_MOVES`; a move outside the table raises (a bug):

===============  ===========================================================================
UNSUBSCRIBED     No topics: nothing is sent until the application subscribes.
JOINING          Heartbeats at epoch 0 (the member id is the member's own, a random Kafka
                 ``Uuid``, KIP-1082) with its topics, until the broker names an epoch.
STABLE           In the group: heartbeats every interval the broker names; each assignment
                 the broker sends is applied at once (share groups have no revocation: a
                 partition may be shared, and what a member acquired stays its own to answer
                 for wherever the partition goes).
FENCED           The broker no longer knows this member (FENCED_MEMBER_EPOCH,
                 UNKNOWN_MEMBER_ID): its partitions go, and it joins again at epoch 0 under
                 the same member id.
LEAVING          The leave goes (epoch -1): on close, or when unsubscribed.
FATAL            Ended by an error it cannot go on after (authorization, a group that is full,
                 a broker without ShareGroupHeartbeat v1, ...): every call raises it.
CLOSED           Closed.
===============  ===========================================================================

Rules: only ShareGroupHeartbeat v1 is spoken (v0 was KIP-932's early access; Kafka 4.1
serves v1). The topics go when the member joins and whenever they change (null otherwise),
the rack when it joins. A retriable error (a coordinator that moved, a lost connection) is
tried again after ``retry_backoff_ms``, as is a heartbeat's time running out; the broker's
session timeout, not the client, decides when a silent member is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.cluster.transitions import Transitions
from kafkawire.consumer._waiting import wait_event
from kafkawire.consumer.errors import UnsupportedGroupProtocolError
from kafkawire.consumer.group.heartbeat_request import (
    LEAVE_EPOCH,
    HeartbeatAnswers,
    new_member_id,
)
from kafkawire.consumer.group.member_state import MemberState
from kafkawire.consumer.inbox import Inbox
from kafkawire.consumer.tasks import BackgroundTasks
from kafkawire.errors import (
    ClientClosedError,
    FencedMemberEpochError,
    KafkawireError,
    UnknownMemberIdError,
    error_for_code,
)
from kafkawire.messages.share_group_heartbeat import v1 as heartbeat
from kafkawire.net import NoCommonVersionError

from .metrics import ShareConsumerMetrics

__all__ = ["SHARE_GROUP_HEARTBEAT", "SHARE_MOVES", "ShareMembership"]

_log = logging.getLogger(__name__)
_S = MemberState

SHARE_GROUP_HEARTBEAT = heartbeat.ShareGroupHeartbeatRequest.__api_key__

SHARE_MOVES = Transitions(
    "a share group member",
    {
        _S.UNSUBSCRIBED: {_S.JOINING, _S.CLOSED},
        _S.JOINING: {_S.STABLE, _S.FENCED, _S.FATAL, _S.LEAVING},
        _S.STABLE: {_S.FENCED, _S.FATAL, _S.LEAVING},
        _S.FENCED: {_S.JOINING, _S.LEAVING, _S.FATAL},
        _S.LEAVING: {_S.UNSUBSCRIBED, _S.CLOSED},
        _S.FATAL: {_S.CLOSED},
    },
)
"""The moves of a share group member."""

_FENCED = (FencedMemberEpochError, UnknownMemberIdError)


class ShareMembership(HeartbeatAnswers):
    """One member of one share group, run by a background task; ``assigned`` is called with
    each new assignment (resolved to topic names)."""

    def __init__(
        self,
        cluster: Cluster,
        group_id: str,
        *,
        rack: str | None,
        backoff_ms: int,
        assigned: Callable[[frozenset[TopicPartition]], None],
        tasks: BackgroundTasks,
        inbox: Inbox,
        metrics: ShareConsumerMetrics,
    ) -> None:
        self._cluster = cluster
        self._metrics = metrics
        self._group_id = group_id
        self._rack = rack
        self._backoff = backoff_ms / 1000
        self._assigned = assigned
        self._tasks = tasks
        self._inbox = inbox
        self.member_id = new_member_id()
        self.epoch = 0
        self.state = _S.UNSUBSCRIBED
        self.topics: frozenset[str] = frozenset()
        self.assignment: frozenset[TopicPartition] = frozenset()
        self._target: dict[uuid.UUID, frozenset[int]] | None = None
        self._sent_topics: frozenset[str] | None = None  # as the last answered heartbeat had them
        self._interval = 5.0  # until the broker names one
        self._next_beat = 0.0
        self._joined = False  # a heartbeat under this member id reached the broker
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # --- what the consumer calls -------------------------------------------------------------

    def start(self) -> None:
        self._task = self._tasks.spawn(
            f"share membership of group {self._group_id}", self._run, lasting=True
        )

    def subscribe(self, topics: frozenset[str]) -> None:
        """Read ``topics`` (none: leave the group)."""
        self.topics = topics
        if topics and self.state is _S.UNSUBSCRIBED:
            self._move(_S.JOINING)
        self._wake.set()

    async def close(self) -> None:
        """Stop, and leave the group (if in it)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self.state in (_S.JOINING, _S.STABLE, _S.FENCED):
            self._move(_S.LEAVING)
            await self._leave()
        if self.state in (_S.LEAVING, _S.UNSUBSCRIBED, _S.FATAL):
            self._move(_S.CLOSED)

    # --- the loop ----------------------------------------------------------------------------

    async def _run(self) -> None:
        while self.state not in (_S.FATAL, _S.CLOSED):
            if not self.topics and self.state in (_S.JOINING, _S.STABLE, _S.FENCED):
                self._move(_S.LEAVING)
                await self._leave()
                self._move(_S.UNSUBSCRIBED)
            if self.state is _S.UNSUBSCRIBED:
                self._wake.clear()
                await self._wake.wait()
                continue
            await wait_event(self._wake, max(self._next_beat - time.monotonic(), 0.0))
            self._wake.clear()
            if self.state in (_S.JOINING, _S.STABLE, _S.FENCED) and self.topics:
                await self._beat()

    async def _beat(self) -> None:
        self._next_beat = time.monotonic() + self._interval
        if self.state is _S.FENCED:
            self._move(_S.JOINING)
        try:
            sent = time.monotonic()
            response = await self._cluster.send(self._request(), retry=False)
            self._metrics.heartbeats.heartbeat_answered((time.monotonic() - sent) * 1000)
            error = error_for_code(response.error_code, response.error_message or "")
            if error is not None:
                raise error
        except _FENCED as exc:
            self._fenced(exc)
            return
        except ClientClosedError:
            raise
        except NoCommonVersionError as exc:
            self._fail(
                UnsupportedGroupProtocolError(
                    f"the coordinator of share group {self._group_id!r} does not serve "
                    f"ShareGroupHeartbeat v1 (share groups need Kafka 4.1 or later): {exc}"
                )
            )
            return
        except (KafkawireError, OSError) as exc:
            if isinstance(exc, KafkawireError) and not exc.retriable:
                self._fail(exc)
                return
            self._sent_topics = None  # the broker may not have seen them: send them again
            _log.info("share group %s: heartbeat failed, retrying: %s", self._group_id, exc)
            self._next_beat = time.monotonic() + self._backoff
            return
        self._joined = True
        self._accept(response)
        await self._apply()

    def _request(self) -> heartbeat.ShareGroupHeartbeatRequest:
        joining = self.epoch == 0
        topics = None
        if joining or self._sent_topics != self.topics:
            topics = tuple(sorted(self.topics))
        self._sent_topics = self.topics
        return heartbeat.ShareGroupHeartbeatRequest(
            group_id=self._group_id,
            member_id=self.member_id,
            member_epoch=self.epoch,
            rack_id=self._rack if joining else None,
            subscribed_topic_names=topics,
        )

    def _accept(self, response: heartbeat.ShareGroupHeartbeatResponse) -> None:
        self._take_answer(response)
        if self.epoch > 0 and self.state is _S.JOINING:
            self._move(_S.STABLE)

    async def _apply(self) -> None:
        """Make the broker's assignment the fetcher's (the part whose topic ids the metadata
        names; the rest on a later heartbeat)."""
        if self._target is None:
            return
        names = await self._topic_names(set(self._target))
        wanted = frozenset(
            TopicPartition(names[topic_id], p)
            for topic_id, partitions in self._target.items()
            if topic_id in names
            for p in partitions
        )
        if wanted != self.assignment:
            _log.info(
                "share group %s: member %s epoch %d is assigned %s",
                self._group_id,
                self.member_id,
                self.epoch,
                sorted(wanted),
            )
            self.assignment = wanted
            self._metrics.rebalanced()
            self._assigned(wanted)

    async def _topic_names(self, topic_ids: set[uuid.UUID]) -> dict[uuid.UUID, str]:
        metadata = self._cluster.current_metadata
        if metadata is None or any(metadata.topic_name(t) is None for t in topic_ids):
            metadata = await self._cluster.refresh_metadata(sorted(self.topics))
        return {t: name for t in topic_ids if (name := metadata.topic_name(t)) is not None}

    # --- out of the group --------------------------------------------------------------------

    def _fenced(self, error: KafkawireError) -> None:
        _log.warning("share group %s: %s; its partitions go, joining again", self._group_id, error)
        self._move(_S.FENCED)
        self._out_of_group()
        self._next_beat = 0.0  # join again at once

    def _fail(self, error: KafkawireError) -> None:
        _log.error("share group %s: %s", self._group_id, error)
        self._move(_S.FATAL)
        self._out_of_group()
        self._inbox.end(error)

    def _out_of_group(self) -> None:
        self.epoch = 0
        self._target = None
        self._sent_topics = None
        if self.assignment:
            self.assignment = frozenset()
            self._assigned(self.assignment)

    async def _leave(self) -> None:
        """The heartbeat that leaves (epoch -1), if the broker knows this member; its answer
        does not matter."""
        if self._joined:
            request = heartbeat.ShareGroupHeartbeatRequest(
                group_id=self._group_id, member_id=self.member_id, member_epoch=LEAVE_EPOCH
            )
            with contextlib.suppress(KafkawireError, OSError):
                await self._cluster.send(request, retry=False)
        self._joined = False
        self._out_of_group()

    def _move(self, new: MemberState) -> None:
        old = self.state
        SHARE_MOVES.check(old, new, f"the membership of share group {self._group_id}")
        self.state = new
        _log.debug("share group %s: %s -> %s", self._group_id, old.name, new.name)
