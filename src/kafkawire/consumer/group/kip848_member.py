"""Group membership with the consumer group protocol of KIP-848 (``group_protocol="consumer"``).

The broker runs the assignor; a member only heartbeats (ConsumerGroupHeartbeat) and makes
the assignment the broker names come true. Two tasks per consumer: the heartbeat loop and,
when an assignment changes, one reconciliation at a time beside it, so heartbeats go on
while the listener's callbacks run. Its states and their moves are
:data:`~.member_state.KIP848_MOVES` (UNJOINED -> JOINING -> RECONCILING -> ACKNOWLEDGING ->
STABLE, and RECONCILING again for each new target), as Java's ``MemberState``. What a
reconciliation changes runs in the application's next poll (the rule of
:mod:`kafkawire.consumer.group`); only an acknowledgement with nothing to change goes at once.
Rules, after Kafka's Java client (its ``ConsumerMembershipManager``) and librdkafka:

- Joining: a heartbeat at member epoch 0 with a member id of the member's own (KIP-1082; at
  ConsumerGroupHeartbeat v0 the broker names it instead), the subscribed topics, the rebalance
  timeout (``max_poll_interval_ms``), the static instance id and the server assignor if set.
  Every field goes again while the epoch stays 0; later heartbeats carry only what changed
  (:mod:`.heartbeat_request`), every interval the broker names.
- Reconciling: the broker's target assignment names topics by id. Names come from metadata
  (refreshed for ids it lacks; partitions of ids still unknown wait for a later try). What the
  target drops is revoked first (no more records reach the application, their positions are
  committed with auto-commit, the listener's revoked, out of the assignment); what it adds is
  taken next (positions from the group's commits, the listener's assigned); then a heartbeat
  goes at once with the owned partitions: the acknowledgement. The broker hands a partition to
  its new owner only once the old one stops reporting it.
- Fenced (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID): everything is lost (listener's lost, in
  the next poll; nothing committed) and the member then joins again at epoch 0, with the
  same member id.
- COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and lost
  connections: the cluster layer finds the coordinator again and retries with backoff; the
  next heartbeat carries every field.
- Any other error (GROUP_AUTHORIZATION_FAILED, UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED,
  INVALID_REQUEST, UNSUPPORTED_ASSIGNOR, UNSUPPORTED_VERSION, a code kafkawire does not know) is
  fatal, as in Java: the partitions are lost, heartbeats stop, and every later poll raises it.
- ``max_poll_interval_ms``: a member the application has not polled for that long leaves
  (epoch -1; -2 for a static member); its next poll hears its partitions were lost (a commit
  before then raises ``CommitFailedError``), and it joins again.
- No topics subscribed (``unsubscribe``): the member leaves and heartbeats no more until it
  subscribes again (UNSUBSCRIBED).
- Closing: after the consumer's last auto-commit the listener hears that everything is
  revoked, and the member leaves with epoch -1 (-2 for a static member: the broker keeps its
  assignment for the session timeout, so a restart gets it back).
- Commits carry the member epoch where the classic protocol has the generation id, once the
  member has one; one refused with STALE_MEMBER_EPOCH goes again when a heartbeat brings the
  new epoch (the consumer's ``_as_member``); auto-commits go from the application's poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

from kafkawire.cluster import TopicPartition
from kafkawire.consumer._waiting import wait_event
from kafkawire.consumer.commits import Generation
from kafkawire.consumer.errors import UnsupportedGroupProtocolError
from kafkawire.consumer.tasks import is_transient
from kafkawire.errors import (
    ClientClosedError,
    FencedMemberEpochError,
    KafkawireError,
    UnknownMemberIdError,
    UnsupportedVersionError,
    error_for_code,
)
from kafkawire.messages.consumer_group_heartbeat import v1 as heartbeat_v1

from .heartbeat_request import Assignment, HeartbeatAnswers, HeartbeatFields, new_member_id
from .member_state import KIP848_MOVES, MemberState
from .membership import GroupContext, GroupMembership

__all__ = ["Kip848Member"]

_log = logging.getLogger(__name__)

CONSUMER_GROUP_HEARTBEAT = heartbeat_v1.ConsumerGroupHeartbeatRequest.__api_key__
_S = MemberState
_FENCED = (FencedMemberEpochError, UnknownMemberIdError)


class Kip848Member(GroupMembership, HeartbeatAnswers):
    """The membership of one consumer in its group (KIP-848 consumer group protocol)."""

    MOVES = KIP848_MOVES
    PROTOCOL = "consumer"
    API = (CONSUMER_GROUP_HEARTBEAT, "ConsumerGroupHeartbeat, KIP-848")

    def __init__(self, context: GroupContext) -> None:
        super().__init__(context)
        settings = context.settings
        self._fields = HeartbeatFields(settings)
        self.member_id = ""  # ours from v1 on (made at the first join), the broker's at v0
        self.epoch = 0
        self._interval = settings.heartbeat_interval_ms / 1000  # until the broker names one
        self._next_beat = 0.0  # time.monotonic() of the next regular heartbeat
        self._target: Assignment | None = None  # the broker's latest assignment for us
        self._owned: Assignment = {}  # the reconciled assignment that heartbeats report
        self._names: dict[uuid.UUID, str] = {}  # topic names of the ids met so far
        self._changes = asyncio.Lock()  # one change of the assignment at a time
        self._reconciling: asyncio.Task[None] | None = None
        # Whether the listener heard of an assignment: the first one goes through the poll
        # even when it changes nothing, so that it does.
        self._assignment_heard = False

    def request_rejoin(self) -> None:
        """The subscription changed: the next heartbeat (sent now) carries it."""
        self._wake.set()

    async def _stop(self) -> None:
        await super()._stop()
        if self._reconciling is not None:
            self._reconciling.cancel()
            await asyncio.gather(self._reconciling, return_exceptions=True)

    # --- the heartbeat loop ------------------------------------------------------------------

    async def _turn(self) -> bool:
        """Wait for the next heartbeat (or a reason to act sooner) and act; ``False`` once
        the membership has ended for good."""
        await self._wait_for_turn()
        if not self._subscriptions.topics:
            self._wake.clear()  # before leaving: a subscription meanwhile must wake it
            if self.state.active:
                await self._leave("the consumer unsubscribed", _S.UNSUBSCRIBED)
            elif self.state is _S.UNJOINED:
                self._move(_S.UNSUBSCRIBED)
            await self._wake.wait()  # until the consumer subscribes again
            return True
        if self.state.active and self._poll_overdue():
            await self._leave_for_slowness()
            return True
        if not self._wake.is_set() and time.monotonic() < self._next_beat:
            return True  # woken to look at the poll clock only
        self._wake.clear()
        self._next_beat = time.monotonic() + self._interval
        try:
            await self._heartbeat()
        except _FENCED as exc:
            await self._thrown_out(exc)
            return True
        except ClientClosedError:
            return False
        except (KafkawireError, OSError) as exc:  # others: the task's owner reports them
            if isinstance(exc, KafkawireError) and not exc.retriable:
                await self._fail(exc)
                return False
            _log.info("group %s: heartbeat failed, retrying: %s", self._group_id, exc)
            self._next_beat = time.monotonic() + self._settings.retry_backoff_ms / 1000
        return True

    async def _wait_for_turn(self) -> None:
        """Until the next heartbeat is due, a wake-up, or (in the group) the poll deadline."""
        due = self._next_beat
        if self.state.active:
            due = min(due, self._last_poll + self._settings.max_poll_interval_ms / 1000)
        await wait_event(self._wake, max(due - time.monotonic(), 0.0))

    async def _heartbeat(self) -> None:
        if self.state in (_S.UNJOINED, _S.UNSUBSCRIBED):
            self._move(_S.JOINING)
        _, version = await self._coordinator_version()
        if not self.member_id and version >= 1:
            self.member_id = new_member_id()
        request = self._fields.request(
            member_id=self.member_id,
            epoch=self.epoch,
            topics=self._subscriptions.topics,
            owned=self._owned,
            version=version,
        )
        acknowledging = self.state is _S.ACKNOWLEDGING  # this heartbeat is the acknowledgement
        try:
            response = await self._send_heartbeat(request)
            error = error_for_code(response.error_code, response.error_message)
            if error is not None:
                raise error
        except BaseException:
            self._fields.forget()  # the broker may not have seen it: send everything again
            raise
        self._accept(response)
        self._after_heartbeat(acknowledging)

    def _accept(self, response: Any) -> None:
        self._take_answer(response)
        instance_id = self._settings.group_instance_id
        # Commits name the member only once it has an epoch (as Java's do): at 0 it has none.
        self.generation = (
            Generation(self.epoch, self.member_id, instance_id)
            if self.epoch > 0
            else Generation(group_instance_id=instance_id)
        )

    def _after_heartbeat(self, acknowledged: bool) -> None:
        """Where the member stands once a heartbeat was answered: reconcile a target that
        differs from what it owns (one reconciliation at a time: the next heartbeat starts
        another if need be), or be stable."""
        if self.epoch <= 0:
            return  # still joining
        reconciling = self._reconciling is not None and not self._reconciling.done()
        if self._target is not None and self._target != self._owned:
            if self.state is not _S.RECONCILING:
                self._move(_S.RECONCILING)
            if not reconciling:
                round_ = self._round
                self._reconciling = self._tasks.spawn(
                    f"reconciliation of group {self._group_id}",
                    lambda: self._reconcile(round_),
                )
        elif (
            self.state is _S.JOINING
            or (self.state is _S.ACKNOWLEDGING and acknowledged)
            or (self.state is _S.RECONCILING and not reconciling)
        ):
            self._move(_S.STABLE)

    # --- reconciling -------------------------------------------------------------------------

    async def _reconcile(self, round_: int) -> None:
        """Make the target come true: at once if the partitions stay the same (only the
        acknowledgement is due), else in the application's next poll."""
        try:
            if self._target is None:
                return
            resolved, wanted = await self._wanted(self._target)
            if wanted == set(self._subscriptions.assigned()) and self._assignment_heard:
                self._acknowledge(resolved, round_)  # an epoch moved on, or unresolved topics
                return
            await self._at_poll(lambda: self._reconcile_at_poll(round_))
        except (KafkawireError, OSError) as exc:  # the next heartbeat tries again
            _log.warning("group %s: reconciling failed, will retry: %s", self._group_id, exc)
            if not is_transient(exc):
                self._inbox.put(exc)

    async def _reconcile_at_poll(self, round_: int) -> None:
        async with self._changes:
            if self._current(round_) and self._target is not None:
                await self._reconcile_to(self._target, round_)

    async def _wanted(self, target: Assignment) -> tuple[Assignment, set[TopicPartition]]:
        """The part of ``target`` whose topic names are known, and its partitions."""
        names = await self._topic_names(target)
        resolved = {topic_id: ps for topic_id, ps in target.items() if topic_id in names}
        return resolved, {TopicPartition(names[t], p) for t, ps in resolved.items() for p in ps}

    async def _reconcile_to(self, target: Assignment, round_: int) -> None:
        resolved, wanted = await self._wanted(target)
        owned = set(self._subscriptions.assigned())
        if wanted == owned and self._assignment_heard:
            self._acknowledge(resolved, round_)  # changed back meanwhile
            return
        _log.info(
            "group %s: member %s epoch %d: revoking %s, adding %s",
            self._group_id,
            self.member_id,
            self.epoch,
            sorted(owned - wanted),
            sorted(wanted - owned),
        )
        if await self._apply_assignment(wanted, round_) is not None:
            self._acknowledge(resolved, round_)

    def _acknowledge(self, owned: Assignment, round_: int) -> None:
        """``owned`` is now the member's: tell the broker at once."""
        if not self._current(round_):
            return  # the member moved on meanwhile
        self._owned = owned
        self._fields.acknowledge()
        self._assignment_heard = True
        self._move(_S.ACKNOWLEDGING)
        self._wake.set()

    async def _topic_names(self, target: Assignment) -> dict[uuid.UUID, str]:
        """The names of the target's topic ids that can be found (metadata is asked again
        for ids it lacks; those still unknown are left out, to be tried again)."""
        metadata = self._cluster.current_metadata
        for attempt in range(2):  # the cached metadata, else fresh metadata
            if metadata is not None:
                for topic in metadata.topics.values():
                    if topic.topic_id is not None:
                        self._names[topic.topic_id] = topic.name
            if attempt or all(topic_id in self._names for topic_id in target):
                break
            metadata = await self._cluster.refresh_metadata(sorted(self._subscriptions.topics))
        unknown = [str(t) for t in target if t not in self._names]
        if unknown:
            _log.info("group %s: topic ids not in the metadata yet: %s", self._group_id, unknown)
        return {t: self._names[t] for t in target if t in self._names}

    # --- out of the group ------------------------------------------------------------------

    def _out_of_group(self, error: KafkawireError | None = None) -> None:
        # The member id stays: a fenced member joins again under it (epoch 0).
        self.epoch = 0
        self._target, self._owned = None, {}
        self._fields.forget()
        self.generation = Generation(group_instance_id=self._settings.group_instance_id)

    async def _send_leave(self, member: Generation, reason: str) -> None:
        """The heartbeat that leaves the group (with the member's own id: the generation has
        none while it joins)."""
        request = self._fields.leave(self.member_id)
        if request.member_id:
            with contextlib.suppress(KafkawireError):
                await self._cluster.send(request, negotiate=True, retry=False)

    async def _lose_all(self) -> set[TopicPartition]:
        async with self._changes:  # not in the middle of a reconciliation
            return await super()._lose_all()

    async def _fail(self, error: KafkawireError) -> None:
        if isinstance(error, UnsupportedVersionError):
            error = UnsupportedGroupProtocolError(
                f"the coordinator of group {self._group_id!r} refused ConsumerGroupHeartbeat "
                f"({error}): it does not support the consumer group protocol (KIP-848); "
                "use group_protocol='classic'"
            )
        await self._fatal(error)
