"""What both group protocols share: the consumer's side of one membership.

:class:`GroupMembership` is the interface :class:`~kafkawire.consumer.Consumer` drives, and
the parts both protocols keep alike, once:

- the member's state (:mod:`.member_state`): every change goes through the protocol's table,
  and a move the table does not hold raises (a bug);
- whether the brokers serve the protocol (:meth:`GroupMembership.check_served`, and the
  coordinator's version of its API);
- the background task, the poll clock behind ``max_poll_interval_ms``, the generation (or
  member epoch) that commits carry;
- what runs in the application's poll (the rule is :mod:`kafkawire.consumer.group`'s:
  rebalances act in the poll): applying an assignment (revoke what goes, take up what comes),
  losing every partition;
- being thrown out (partitions lost in the next poll, then joining again), leaving for not
  polling, a fatal error (the partitions lost at once; every later call raises it, through
  the consumer's :class:`~kafkawire.consumer.inbox.Inbox`), and closing.

:mod:`.classic_member` (the classic protocol) and :mod:`.kip848_member` (KIP-848) build on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.cluster.transitions import Transitions
from kafkawire.consumer._waiting import wait_event
from kafkawire.consumer.commits import Generation
from kafkawire.consumer.errors import UnsupportedGroupProtocolError
from kafkawire.consumer.fetching.subscription import SubscriptionState
from kafkawire.consumer.inbox import Inbox
from kafkawire.consumer.metrics import ConsumerMetrics
from kafkawire.consumer.settings import ConsumerSettings
from kafkawire.consumer.tasks import BackgroundTasks
from kafkawire.errors import KafkawireError
from kafkawire.net import NoCommonVersionError

from .listener import ConsumerRebalanceListener, notify
from .member_state import MemberState
from .poll_turns import PollTurns

__all__ = ["GroupContext", "GroupMembership", "PollTimeout"]

_log = logging.getLogger(__name__)

_S = MemberState


class PollTimeout(Exception):
    """The application has not polled for ``max_poll_interval_ms``."""


@dataclass(frozen=True, slots=True)
class GroupContext:
    """What a membership works with, and what it asks of its consumer."""

    cluster: Cluster
    settings: ConsumerSettings
    subscriptions: SubscriptionState
    """The assignment it changes, and the subscribed topics."""
    on_assigned: Callable[[set[TopicPartition]], Awaitable[None]]
    """Position new partitions (from the group's commits, else ``auto_offset_reset``)."""
    commit: Callable[[set[TopicPartition] | None], Awaitable[None]]
    """Commit the consumed positions (of all partitions, or of those given)."""
    inbox: Inbox
    """Where errors for the application go."""
    tasks: BackgroundTasks
    """Where the membership's tasks run (see :mod:`kafkawire.consumer.tasks`)."""
    metrics: ConsumerMetrics
    """Where it records commits, heartbeats and rebalances."""


class GroupMembership(ABC):
    """The membership of one consumer in its group, run by a background task."""

    MOVES: ClassVar[Transitions[MemberState]]
    """The protocol's moves between states."""
    PROTOCOL: ClassVar[str]
    """Its ``group_protocol`` setting."""
    API: ClassVar[tuple[int, str]]
    """The API (key, name) the protocol cannot do without."""

    def __init__(self, context: GroupContext) -> None:
        settings = context.settings
        assert settings.group_id is not None
        self._cluster = context.cluster
        self._settings = settings
        self._group_id = settings.group_id
        self._subscriptions = context.subscriptions
        self._on_assigned = context.on_assigned
        self._commit = context.commit
        self._inbox = context.inbox
        self._tasks = context.tasks
        self._metrics = context.metrics
        self.listener: ConsumerRebalanceListener | None = None
        self.state = MemberState.UNJOINED
        self._round = 0  # moves on as the member enters RECONCILING
        self._generation = Generation(group_instance_id=settings.group_instance_id)
        self._generation_changed = asyncio.Event()
        self._wake = asyncio.Event()  # act now: join, heartbeat
        self.turns = PollTurns(context.tasks, self._group_id)  # what the next poll must do
        self._last_poll = time.monotonic()
        self._task: asyncio.Task[None] | None = None

    # --- whether the brokers serve the protocol ---------------------------------------------

    @classmethod
    async def check_served(cls, cluster: Cluster) -> None:
        """Raise :class:`UnsupportedGroupProtocolError` if the brokers lack the API."""
        conn = await cluster.any_connection()
        if not conn.api_versions.ranges.get(cls.API[0]):
            raise cls._unserved(f"the broker at {conn.peer} does not serve")

    @classmethod
    def _unserved(cls, who: str) -> UnsupportedGroupProtocolError:
        key, name = cls.API
        other = "consumer" if cls.PROTOCOL == "classic" else "classic"
        return UnsupportedGroupProtocolError(
            f"group_protocol={cls.PROTOCOL!r} needs API {key} ({name}), which {who}; "
            f"use group_protocol={other!r}"
        )

    async def _coordinator_version(self) -> tuple[int, int]:
        """The group's coordinator, and the version of the protocol's API it speaks."""
        node = await self._cluster.coordinator(self._group_id)
        try:
            return node, await self._cluster.versions_for(node, self.API[0])
        except NoCommonVersionError as exc:
            raise self._unserved(
                f"the coordinator of group {self._group_id!r} does not serve: {exc}"
            ) from exc

    # --- what the consumer calls -------------------------------------------------------------

    def start(self) -> None:
        self._task = self._tasks.spawn(
            f"membership of group {self._group_id}", self._run, lasting=True
        )

    async def poll(self) -> None:
        """The application asks for records: it is alive (see ``max_poll_interval_ms``), and
        between batches, so what rebalances change in its assignment happens now."""
        self._last_poll = time.monotonic()
        await self.turns.run()

    @abstractmethod
    def request_rejoin(self) -> None:
        """The subscription changed: tell the group."""

    @property
    def generation(self) -> Generation:
        """Who commits: the generation (classic) or member epoch (KIP-848) and member id."""
        return self._generation

    @generation.setter
    def generation(self, value: Generation) -> None:
        if value != self._generation:
            self._generation = value
            self._generation_changed.set()
            self._generation_changed = asyncio.Event()

    @property
    def holds_generation(self) -> bool:
        """Whether the member holds a generation (member epoch) its commits can name."""
        return self._generation.generation_id >= 0

    async def generation_after(self, seen: Generation, timeout: float) -> bool:
        """Whether the generation moves on from ``seen`` within ``timeout`` seconds (a commit
        refused as stale may then be sent again)."""
        if self._generation != seen:
            return True
        return await wait_event(self._generation_changed, timeout)

    async def close(self) -> None:
        """Stop the membership. A member in the group hears (its listener) that its
        partitions are revoked (the consumer has committed them just before, with
        auto-commit) and leaves; one thrown out hears they are lost."""
        if self.state is _S.CLOSED:
            return
        await self._stop()
        if self.state.active:
            await self._leave("the consumer is closing", _S.CLOSED, revoke=True)
            return
        assigned = set(self._subscriptions.assigned())
        if assigned and self.state is not _S.FATAL:  # their loss was not heard yet
            await notify(self.listener, "lost", assigned)
        self._move(_S.CLOSED)

    # --- for the protocols -------------------------------------------------------------------

    async def _run(self) -> None:
        """The membership's loop (the background task). Run again after an error it did not
        expect, it goes on from where the member stands."""
        if self.state in (_S.FENCED, _S.STALE):  # it stopped while the loss waited for a poll
            await self._lose_at_poll()
        while self.state is not _S.FATAL and await self._turn():
            pass

    @abstractmethod
    async def _turn(self) -> bool:
        """One turn of the loop: wait for the next thing to do, and do it. ``False`` once
        the membership has ended for good."""

    @abstractmethod
    async def _send_leave(self, member: Generation, reason: str) -> None:
        """Send the protocol's leave for ``member`` (who it was), if the broker knows it (its
        answer does not matter)."""

    @abstractmethod
    def _out_of_group(self, error: KafkawireError | None = None) -> None:
        """Forget what the member held in the group: it left, or ``error`` threw it out or
        ended it (what it keeps to join again is the protocol's call)."""

    def _move(self, new: MemberState) -> None:
        """Move to ``new``, a move of the protocol's table (else a bug: it raises)."""
        old = self.state
        self.MOVES.check(old, new, f"the membership of group {self._group_id}")
        if new is _S.RECONCILING and old is not _S.RECONCILING:
            self._round += 1
        self._metrics.member_moved(old, new)
        self.state = new
        _log.debug("group %s: %s -> %s", self._group_id, old.name, new.name)

    async def _send_heartbeat(self, request: Any) -> Any:
        """The protocol's heartbeat ``request`` to the coordinator; its answer's time is
        recorded."""
        sent = time.monotonic()
        response = await self._cluster.send(request, negotiate=True)
        self._metrics.heartbeat_answered((time.monotonic() - sent) * 1000)
        return response

    def _current(self, round_: int) -> bool:
        """Whether work of reconciliation round ``round_`` may still change the assignment."""
        return self.state is _S.RECONCILING and self._round == round_

    async def _stop(self) -> None:
        """Stop the membership's tasks (the loop; a protocol adds its own)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def _poll_overdue(self) -> bool:
        """Whether the application has not polled for longer than ``max_poll_interval_ms``."""
        return time.monotonic() - self._last_poll > self._settings.max_poll_interval_ms / 1000

    def _check_poll_interval(self) -> None:
        if self._poll_overdue():
            raise PollTimeout

    async def _at_poll(
        self,
        work: Callable[[], Awaitable[object]],
        *,
        beat: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Have the application's next poll run ``work``, and wait for it. With ``beat`` (a
        member of the group whose heartbeats stop while it waits) it heartbeats every
        interval meanwhile, and gives up with :class:`PollTimeout` if no poll comes within
        ``max_poll_interval_ms``."""
        done = self.turns.submit(work)
        try:
            while not done.done():
                await asyncio.wait([done], timeout=self._settings.heartbeat_interval_ms / 1000)
                if done.done() or beat is None:
                    continue
                self._check_poll_interval()
                await beat()
            done.result()
        finally:
            done.cancel()  # withdrawn, if it has not run

    # --- changing the assignment (in the poll) -------------------------------------------

    async def _apply_assignment(
        self, wanted: set[TopicPartition], round_: int
    ) -> set[TopicPartition] | None:
        """Make ``wanted`` the assignment, for reconciliation round ``round_``: first give up
        what it takes away, then take up what it adds (positioned from the group's commits;
        the listener hears of them). The partitions given up, or ``None`` if the member moved
        on meanwhile (left, thrown out, another round): then what it took is dropped again
        (a later round positions them anew)."""
        owned = set(self._subscriptions.assigned())
        revoked, added = owned - wanted, wanted - owned
        await self._revoke(revoked)
        if not self._current(round_):
            return None
        self._subscriptions.assign(sorted(wanted))
        try:
            await self._on_assigned(added)
        except BaseException:
            self._drop(added)
            raise
        if not self._current(round_):
            self._drop(added)  # the listener never heard of them
            return None
        await notify(self.listener, "assigned", added)
        return revoked

    def _drop(self, added: set[TopicPartition]) -> None:
        self._subscriptions.assign(tp for tp in self._subscriptions.assigned() if tp not in added)

    async def _revoke(self, revoked: set[TopicPartition]) -> None:
        """Give up ``revoked`` in an orderly way: nothing more of them reaches the application,
        their positions are committed (with auto-commit), the listener hears of it, and they
        leave the assignment."""
        if not revoked:
            return
        self._subscriptions.start_revoking(revoked)
        if self._settings.enable_auto_commit:
            with contextlib.suppress(KafkawireError):  # the listener may still commit
                await self._commit(revoked)
        await notify(self.listener, "revoked", revoked)
        self._subscriptions.assign(tp for tp in self._subscriptions.assigned() if tp not in revoked)

    async def _lose_all(self) -> set[TopicPartition]:
        """Drop the whole assignment without committing (the member is out of the group, so
        another may own them already); the listener hears they are lost."""
        lost = set(self._subscriptions.assigned())
        if lost:
            await notify(self.listener, "lost", lost)
        self._subscriptions.assign([])
        return lost

    # --- out of the group -------------------------------------------------------------------

    async def _thrown_out(self, error: KafkawireError) -> None:
        """The group threw the member out: its partitions are lost in the next poll (as
        Java's: the listener hears it there; a commit before then fails), then it joins
        again."""
        _log.warning(
            "group %s: %s; its %d partitions are lost, joining again after the next poll",
            self._group_id,
            error,
            len(self._subscriptions.assigned()),
        )
        self._move(_S.FENCED)
        self._out_of_group(error)
        await self._lose_at_poll()

    async def _leave_for_slowness(self) -> None:
        """``max_poll_interval_ms`` passed without a poll: leave the group so that the
        partitions move on (out of it, the member cannot commit); its next poll hears they
        were lost (as Java's does: another member may own them by then), and it joins
        again."""
        _log.warning(
            "group %s: no poll for more than max_poll_interval_ms (%d ms): leaving the group "
            "so that its partitions move on; the next poll joins again",
            self._group_id,
            self._settings.max_poll_interval_ms,
        )
        await self._leave("consumer poll timeout has expired", _S.STALE)
        await self._lose_at_poll()

    async def _lose_at_poll(self) -> None:
        """Out of the group (FENCED, STALE): lose the partitions in the next poll, then join
        again."""
        await self._at_poll(self._lose_all)
        self._move(_S.UNJOINED)
        self._wake.set()

    async def _leave(self, reason: str, then: MemberState, *, revoke: bool = False) -> None:
        """Leave the group (``revoke``: the listener first hears that the partitions are
        revoked), and move to ``then``."""
        self._move(_S.PREPARE_LEAVING)
        assigned = set(self._subscriptions.assigned())
        if revoke and assigned:
            await notify(self.listener, "revoked", assigned)
        self._move(_S.LEAVING)
        member = self.generation
        self._out_of_group()  # from now on nothing commits as the member
        try:
            await self._send_leave(member, reason)
        finally:
            self._move(then)

    async def _fatal(self, error: KafkawireError, why: str = "") -> None:
        """An error the member cannot go on after: its partitions are lost at once (there is
        no later poll to wait for), and every call of the application raises it."""
        _log.error(
            "group %s: %s%s; the member stops (its %d partitions are lost)",
            self._group_id,
            error,
            why,
            len(self._subscriptions.assigned()),
        )
        self._move(_S.FATAL)
        self._out_of_group(error)
        await self._lose_all()
        self._inbox.end(error)
