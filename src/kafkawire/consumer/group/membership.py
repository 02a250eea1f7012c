"""What both group protocols share: the consumer's side of one membership.

:class:`GroupMembership` is the interface :class:`~kafkawire.consumer.Consumer` drives, and
the parts both protocols keep alike: one background task, the poll clock behind
``max_poll_interval_ms``, the generation (or member epoch) that
commits carry, the orderly revocation of partitions, and the poll turns (:mod:`.poll_turns`):
what a rebalance changes in the assignment runs in the application's next poll
(:meth:`GroupMembership.poll`, from ``getmany``), as in Kafka's Java client, never while the
application processes what the last poll returned. An error that ends the membership for
good (``failure``: fenced, not authorized, ...) is raised by every later call.
:mod:`.coordinator` (the classic protocol) and :mod:`.consumer_protocol` (KIP-848) build on
it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.consumer._waiting import wait_event
from kafkawire.consumer.commits import Generation
from kafkawire.consumer.fetching.subscription import SubscriptionState
from kafkawire.consumer.settings import ConsumerSettings
from kafkawire.consumer.tasks import BackgroundTasks
from kafkawire.errors import KafkawireError

from .listener import ConsumerRebalanceListener, notify
from .poll_turns import PollTurns

__all__ = ["ConsumerHooks", "GroupMembership", "PollTimeout"]

_log = logging.getLogger(__name__)


class PollTimeout(Exception):
    """The application has not polled for ``max_poll_interval_ms``."""


@dataclass(frozen=True, slots=True)
class ConsumerHooks:
    """What a membership asks of its consumer."""

    on_assigned: Callable[[set[TopicPartition]], Awaitable[None]]
    """Position new partitions (from the group's commits, else ``auto_offset_reset``)."""
    commit: Callable[[set[TopicPartition] | None], Awaitable[None]]
    """Commit the consumed positions (of all partitions, or of those given)."""
    on_error: Callable[[BaseException], None]
    """Hand an error to the application's next poll."""
    tasks: BackgroundTasks
    """Where the membership's tasks run (see :mod:`.tasks`)."""


class GroupMembership(ABC):
    """The membership of one consumer in its group, run by a background task."""

    def __init__(
        self,
        cluster: Cluster,
        settings: ConsumerSettings,
        subscriptions: SubscriptionState,
        hooks: ConsumerHooks,
    ) -> None:
        assert settings.group_id is not None
        self._cluster = cluster
        self._settings = settings
        self._group_id = settings.group_id
        self._subscriptions = subscriptions
        self._on_assigned = hooks.on_assigned
        self._commit = hooks.commit
        self._on_error = hooks.on_error
        self._tasks = hooks.tasks
        self.listener: ConsumerRebalanceListener | None = None
        self._generation = Generation(group_instance_id=settings.group_instance_id)
        self._generation_changed = asyncio.Event()
        self.turns = PollTurns()  # what the application's next poll must do
        self._last_poll = time.monotonic()
        self._task: asyncio.Task[None] | None = None
        self.joined = asyncio.Event()  # set once the first assignment has arrived
        self.failure: KafkawireError | None = None  # what ended the membership for good

    # --- what the consumer calls -------------------------------------------------------------

    def start(self) -> None:
        self._task = self._tasks.spawn(
            f"membership of group {self._group_id}", self._run, lasting=True
        )

    async def poll(self) -> None:
        """The application asks for records: it is alive (see ``max_poll_interval_ms``), and
        between batches, so what rebalances change in its assignment happens now. Raises
        the error that ended the membership, if one did: every poll hears of it."""
        self._raise_failure()
        self._last_poll = time.monotonic()
        await self.turns.run()
        self._raise_failure()

    def _raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure.with_traceback(None)

    @property
    def in_group(self) -> bool:
        """Whether the member holds a generation (member epoch) its commits can name."""
        return self.generation.generation_id >= 0

    @abstractmethod
    def request_rejoin(self) -> None:
        """The subscription changed: tell the group."""

    @abstractmethod
    async def close(self) -> None:
        """Stop the membership: commit (with auto-commit) and leave the group."""

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

    async def generation_after(self, seen: Generation, timeout: float) -> bool:
        """Whether the generation moves on from ``seen`` within ``timeout`` seconds (a commit
        refused as stale may then be sent again)."""
        if self._generation != seen:
            return True
        return await wait_event(self._generation_changed, timeout)

    # --- for the protocols -------------------------------------------------------------------

    @abstractmethod
    async def _run(self) -> None:
        """The membership's loop (the background task)."""

    async def _stop_task(self) -> None:
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
        await self._leave_group_for_slowness()
        await self._at_poll(self._lose_all)

    @abstractmethod
    async def _leave_group_for_slowness(self) -> None:
        """Leave the group as the protocol does it (the partitions go at the next poll)."""

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
