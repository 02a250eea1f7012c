"""The consumer facade: what applications call.

The parts: :mod:`.settings` (what can be set); :mod:`.fetching` (the assignment and the
positions, Fetch requests and the buffer); :mod:`.offsets` (offsets by time and at the ends);
and for groups :mod:`.commits` and a membership of either protocol (:mod:`.group`: classic,
or KIP-848 with ``group_protocol="consumer"``).

Without a ``group_id``, topics given to the consumer are read whole: every partition, from
``auto_offset_reset``, as aiokafka does; ``assign`` picks partitions by hand.

Every background task (the fetcher and its fetches, the membership and its reconciliations,
the work a rebalance does in the poll, positioning, auto-commit) belongs to one
:class:`~.tasks.BackgroundTasks`, which names them and cancels them on close. Every error of
that work reaches the application through one :class:`~.inbox.Inbox`: the next call raises
it, and ``close`` releases everything whatever failed.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from typing_extensions import Unpack

from kafkawire.client.group_metadata import ConsumerGroupMetadata
from kafkawire.client.observability import Observable
from kafkawire.cluster import Cluster, ConnectionFactory, TopicPartition, build_settings
from kafkawire.errors import ClientClosedError, KafkawireError, StaleMemberEpochError
from kafkawire.net.errors import RequestTimeoutError
from kafkawire.operations.telemetry import TelemetryReporter

from ._waiting import wait_any
from .commits import Generation, OffsetAndMetadata, OffsetStore
from .errors import CommitFailedError, ConsumerStateError
from .fetching.fetcher import Fetcher
from .fetching.record import ConsumerRecord
from .fetching.subscription import SubscriptionState
from .group.auto_commit import AutoCommitter
from .group.classic_member import ClassicMember
from .group.kip848_member import Kip848Member
from .group.listener import ConsumerRebalanceListener
from .group.membership import GroupContext, GroupMembership
from .health import ConsumerHealth, ConsumerParts, consumer_health
from .inbox import Inbox
from .metrics import ConsumerMetrics, telemetry_labels, timed_poll
from .offsets import OffsetAndTimestamp, OffsetLookup
from .settings import ConsumerOptions, ConsumerSettings
from .tasks import BackgroundTasks, is_transient

__all__ = ["Consumer"]

_log = logging.getLogger(__name__)

T = TypeVar("T")


class Consumer(Observable):
    """``async with Consumer("topic", bootstrap_servers="host:9092") as consumer: ...``.

    Options are :class:`ConsumerSettings`' (the Java client's names), as keyword arguments or
    as ``settings``. ``connect`` replaces how connections open (for tests).
    """

    def __init__(
        self,
        *topics: str,
        bootstrap_servers: str | Sequence[str] | None = None,
        settings: ConsumerSettings | None = None,
        connect: ConnectionFactory | None = None,
        **options: Unpack[ConsumerOptions],
    ) -> None:
        settings = build_settings(
            ConsumerSettings, "Consumer", bootstrap_servers, settings, options
        )
        self.settings = settings
        self._cluster = Cluster(
            settings.bootstrap_servers,
            settings.client_settings(call_timeout_ms=settings.default_api_timeout_ms),
            connect=connect,
            metrics=settings.metrics_registry(),
            metric_group_prefix="consumer",
        )
        self._metrics = ConsumerMetrics(
            self._cluster.metrics, settings, lambda: len(self._subscriptions.assigned())
        )
        self._telemetry = TelemetryReporter(
            self._cluster,
            client=f"consumer {settings.client_id}",
            enabled=settings.enable_metrics_push,
            wait=settings.default_api_timeout_ms / 1000,
            labels=lambda: telemetry_labels(settings, self._group),
        )
        self._subscriptions = SubscriptionState(settings.auto_offset_reset, self._changed)
        self._lookup = OffsetLookup(self._cluster, read_committed=settings.read_committed)
        self._tasks = BackgroundTasks(restart_delay=settings.retry_backoff_max_ms / 1000)
        self._inbox = Inbox(self._tasks)
        self._fetcher = Fetcher(
            self._cluster,
            settings,
            self._subscriptions,
            self._lookup,
            tasks=self._tasks,
            inbox=self._inbox,
            metrics=self._metrics,
        )
        self._iterated: deque[ConsumerRecord] = deque()  # fetched for iteration, not yet yielded
        self._started = self._closed = False
        self._offsets = OffsetStore(self._cluster, settings.group_id) if settings.group_id else None
        self._group: GroupMembership | None = None
        self._auto_commit: AutoCommitter | None = None  # in a group, with enable_auto_commit
        self._positioning: set[asyncio.Task[None]] = set()
        self._closing = asyncio.Event()
        # What ends a getmany's wait: data, an error, work for the poll, a close.
        self._wakers = (self._fetcher.ready, *self._inbox.signals, self._closing)
        self._listener: ConsumerRebalanceListener | None = None
        if topics:
            self._subscriptions.topics = frozenset(topics)

    def _changed(self) -> None:
        # The assignment may have changed under iteration (a rebalance took partitions away):
        # records fetched for it but not yet yielded must not be handed out any more.
        if self._iterated:
            assigned = set(self._subscriptions.assigned())
            self._drop_iterated(lambda tp: tp not in assigned)
        self._metrics.assignment_changed(lambda tp: self._subscriptions.get(tp) is not None)
        self._fetcher.wake()

    # --- life cycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect and start fetching (and, with topics, find their partitions)."""
        await self._cluster.__aenter__()
        try:
            if self._offsets is not None:
                await self._membership().check_served(self._cluster)
            if self._subscriptions.topics and self._offsets is None:
                await self._assign_topics()
        except BaseException:
            await self._cluster.close()
            raise
        self._fetcher.start()
        self._telemetry.start(self._tasks)
        self._started = True
        if self._subscriptions.topics and self._offsets is not None:
            self._start_group()

    async def __aenter__(self) -> Consumer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop fetching and close every connection; a pending ``getmany`` ends with
        :class:`~kafkawire.errors.ClientClosedError`. Calling it again does nothing. It does
        not raise for what failed before or fails now (the last commit, leaving the group):
        that is logged, and everything is released."""
        if self._closed:
            return
        self._closed = True
        self._closing.set()  # wakes a getmany or position waiting: it sees the close
        for task in self._positioning:
            task.cancel()
        group = self._group
        if group is not None and self.settings.enable_auto_commit and group.holds_generation:
            await self._quietly("the last auto-commit", self._commit_consumed(None))
        # The last metrics push (KIP-714) goes while the member still has its id (its label).
        await self._telemetry.close(self.settings.request_timeout_ms / 1000)
        if group is not None:
            await self._quietly("leaving the group", group.close())
        await self._tasks.close()
        await self._cluster.close()

    @staticmethod
    async def _quietly(what: str, work: Awaitable[None]) -> None:
        """``await work`` for ``close``: an error is logged, and closing goes on."""
        try:
            await work
        except KafkawireError as exc:
            _log.info("closing the consumer: %s failed: %s", what, exc)
        except Exception:  # close must release the connections whatever this was
            _log.exception("closing the consumer: %s failed", what)

    def health(self) -> ConsumerHealth:
        """Whether the consumer is making progress now, and why not (the rules:
        :mod:`kafkawire.consumer.health`); a plain call, cheap."""
        parts = ConsumerParts(
            self.settings,
            self._cluster,
            self._subscriptions,
            self._fetcher,
            self._inbox,
            self._metrics,
            self._group,
        )
        return consumer_health(parts, started=self._started, closed=self._closed)

    def _check_running(self) -> None:
        if self._closed:
            raise ClientClosedError("the consumer is closed")
        if not self._started:
            raise ConsumerStateError("the consumer is not started: use `async with` or start()")
        self._inbox.raise_failures()

    # --- what to read ------------------------------------------------------------------------

    async def _assign_topics(self) -> None:
        """Without a group: every partition of the subscribed topics."""
        topics = sorted(self._subscriptions.topics)
        metadata = await self._cluster.metadata(topics)
        partitions = [
            TopicPartition(topic, p) for topic in topics for p in metadata.topics[topic].partitions
        ]
        self._subscriptions.assign(sorted(partitions))
        self._subscriptions.request_reset(partitions)

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly ``partitions`` (no group membership); each starts from its committed
        offset (with a ``group_id``), else ``auto_offset_reset``, unless it was assigned
        already or is seeked."""
        if self._group is not None:
            raise ConsumerStateError("assign() after subscribe(): unsubscribe() first")
        partitions = [TopicPartition(*tp) for tp in partitions]
        self._subscriptions.topics = frozenset()
        new = {tp for tp in partitions if self._subscriptions.get(tp) is None}
        self._subscriptions.assign(partitions)
        self._drop_iterated(lambda tp: tp not in set(partitions))
        if self._offsets is None:
            self._subscriptions.request_reset(new)
        elif new:
            self._position_in_background(self._epochs(new))

    def subscribe(
        self, topics: Iterable[str], listener: ConsumerRebalanceListener | None = None
    ) -> None:
        """Read ``topics`` (a list of names, not one name): as a member of the group with a
        ``group_id`` (the group splits their partitions among its members; ``listener`` hears
        of each change), else all their partitions."""
        if isinstance(topics, str):
            raise TypeError(
                f"subscribe() takes a list of topic names, not a str: pass [{topics!r}]"
            )
        if self._subscriptions.assigned() and not self._subscriptions.topics:
            raise ConsumerStateError("subscribe() after assign(): assign([]) first")
        self._subscriptions.topics = frozenset(topics)
        if self._offsets is None:
            if self._started:
                self._background("finding the partitions of the topics", self._assign_topics)
            return
        if self._group is None and self._started:
            self._start_group()
        self._listener = listener
        if self._group is not None:
            self._group.listener = listener
            self._group.request_rejoin()

    def unsubscribe(self) -> None:
        """Drop every subscribed topic and assigned partition (a group member leaves its
        partitions)."""
        self._subscriptions.topics = frozenset()
        self._subscriptions.assign([])
        if self._group is not None:
            self._group.request_rejoin()

    def _background(self, what: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work()`` beside the application (its coroutine is made in the task, so that a
        close before it starts leaves none unawaited), again after a backoff while it fails
        with a transient error; another Kafka error reaches the next ``getmany``."""

        async def run() -> None:
            while True:
                try:
                    await work()
                    return
                except (KafkawireError, OSError) as exc:
                    if not is_transient(exc):
                        self._inbox.put(exc)
                        return
                    _log.info("%s failed, trying again: %s", what, exc)
                await asyncio.sleep(self.settings.retry_backoff_ms / 1000)

        task = self._tasks.spawn(what, run)
        self._positioning.add(task)
        task.add_done_callback(self._positioning.discard)

    def assignment(self) -> set[TopicPartition]:
        """The partitions the consumer reads now (assigned by hand or by its group)."""
        return set(self._subscriptions.assigned())

    def group_metadata(self) -> ConsumerGroupMetadata:
        """Who this member is now, for ``Producer.send_offsets_to_transaction`` (as Java's
        ``groupMetadata()``): its group's coordinator then refuses the offsets once the
        group has moved on from this member (KIP-447)."""
        group_id = self.settings.group_id
        if group_id is None:
            raise ConsumerStateError("group_metadata() needs a consumer with a group_id")
        generation = self._generation()
        return ConsumerGroupMetadata(
            group_id,
            generation.generation_id,
            generation.member_id,
            self.settings.group_instance_id,
        )

    # --- reading -----------------------------------------------------------------------------

    @timed_poll
    async def getmany(
        self,
        *partitions: TopicPartition,
        timeout_ms: int = 0,
        max_records: int | None = None,
    ) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Records of the assigned partitions (or of ``partitions``): what is buffered at
        once, else what arrives within ``timeout_ms``; ``{}`` if nothing does. At most
        ``max_records`` (default ``max_poll_records``). Cancelling it loses nothing.

        In a group, this is where rebalances change the assignment and call the listener,
        before records are handed out (rebalances act in the poll:
        :mod:`kafkawire.consumer.group`).

        Errors of the background work are raised here; an error that ended the group
        membership for good (such as ``FencedInstanceIdError`` or
        ``GroupAuthorizationFailedError``) by every call."""
        self._check_running()
        wanted = max_records or self.settings.max_poll_records
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            if self._group is not None:
                await self._group.poll()
                self._check_running()
                self._poll_auto_commit()
            self._inbox.raise_for_poll()
            records = self._fetcher.drain(wanted, partitions)
            if records:
                return records
            left = deadline - time.monotonic()
            if left <= 0:
                return {}
            await wait_any(self._wakers, left)
            self._check_running()

    def __aiter__(self) -> Consumer:
        return self

    async def __anext__(self) -> ConsumerRecord:
        """The next record, waiting as long as it takes; ends only by ``close``."""
        if self._iterated:
            if self._auto_commit is not None:  # checked here: this runs once per record
                self._poll_auto_commit()  # each step of an iteration is a poll (as getmany)
            return self._iterated.popleft()
        while not self._iterated:
            try:
                batch = await self.getmany(timeout_ms=1000)
            except ClientClosedError:
                raise StopAsyncIteration from None
            for records in batch.values():
                self._iterated.extend(records)
        return self._iterated.popleft()

    def _poll_auto_commit(self) -> None:
        """Auto-commit what earlier polls handed out, if due (see :mod:`.group.auto_commit`)."""
        if (
            self._auto_commit is not None
            and self._group is not None
            and self._group.holds_generation
        ):
            self._auto_commit.poll(self._consumed)

    def _drop_iterated(self, dropped: Any) -> None:
        """Forget records fetched for iteration of partitions that were seeked or revoked."""
        if self._iterated:
            self._iterated = deque(
                r for r in self._iterated if not dropped(TopicPartition(r.topic, r.partition))
            )

    # --- positions ---------------------------------------------------------------------------

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read ``partition`` from ``offset`` on (the next ``getmany`` returns it first)."""
        if offset < 0:
            raise ValueError(f"seek offset must be >= 0, not {offset}")
        self._subscriptions.seek(partition, offset)
        self._drop_iterated(lambda tp: tp == partition)

    def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        """Read ``partitions`` (default: all assigned) from their first offset."""
        self._seek_to(partitions, "earliest")

    def seek_to_end(self, *partitions: TopicPartition) -> None:
        """Read only records written after now to ``partitions`` (default: all assigned)."""
        self._seek_to(partitions, "latest")

    def _seek_to(self, partitions: Sequence[TopicPartition], policy: str) -> None:
        chosen = set(partitions or self._subscriptions.assigned())
        self._subscriptions.request_reset(chosen, policy)
        self._drop_iterated(lambda tp: tp in chosen)

    async def position(self, partition: TopicPartition, *, timeout_ms: int | None = None) -> int:
        """The offset of the next record ``partition`` returns, waiting for a pending reset
        or commit lookup up to ``timeout_ms`` (default ``default_api_timeout_ms``), then
        :class:`~kafkawire.net.errors.RequestTimeoutError`, as Java's ``position(tp,
        timeout)``; a close meanwhile ends it with ClientClosedError."""
        self._check_running()
        limit = self.settings.default_api_timeout_ms if timeout_ms is None else timeout_ms
        deadline = time.monotonic() + limit / 1000
        while (position := self._subscriptions.state(partition).position) is None:
            self._inbox.raise_for_poll()
            left = deadline - time.monotonic()
            if left <= 0:
                raise RequestTimeoutError(
                    f"the position of {partition.topic}/{partition.partition} was not known "
                    f"within {limit} ms (its offset reset or committed offset is still being "
                    "looked up)"
                )
            # The partition ends the wait once it has a position; an error or a close sooner.
            known = self._subscriptions.positioned(partition)
            await wait_any([known, *self._inbox.signals, self._closing], left)
            self._check_running()
        return position - sum(1 for r in self._iterated if (r.topic, r.partition) == partition)

    def highwater(self, partition: TopicPartition) -> int:
        """The high watermark the last fetch of ``partition`` saw (-1 before one)."""
        return self._subscriptions.state(partition).high_watermark

    async def beginning_offsets(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """The first offset of each partition (its log start offset)."""
        self._check_running()
        return await self._lookup.beginning(list(partitions))

    async def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The offset after each partition's last record (at read_committed: its last stable
        offset)."""
        self._check_running()
        return await self._lookup.end(list(partitions))

    async def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """The first offset of each partition whose timestamp is at or after the time given
        (ms since the epoch); ``None`` where no record is that recent."""
        self._check_running()
        return await self._lookup.for_times(timestamps)

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop returning and fetching records of ``partitions`` until :meth:`resume`."""
        self._subscriptions.pause(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        """Fetch and return records of ``partitions`` again after :meth:`pause`."""
        self._subscriptions.resume(partitions)

    def paused(self) -> set[TopicPartition]:
        """The partitions paused by :meth:`pause` and not yet resumed."""
        return self._subscriptions.paused()

    async def partitions_for(self, topic: str) -> set[int]:
        """The partition numbers of ``topic``, from the cluster's metadata."""
        self._check_running()
        return set((await self._cluster.metadata([topic])).topics[topic].partitions)

    # --- groups and offsets ------------------------------------------------------------------

    def _membership(self) -> type[GroupMembership]:
        """The membership of the ``group_protocol`` set."""
        return Kip848Member if self.settings.group_protocol == "consumer" else ClassicMember

    def _start_group(self) -> None:
        context = GroupContext(
            cluster=self._cluster,
            settings=self.settings,
            subscriptions=self._subscriptions,
            on_assigned=self._position_from_commits,
            commit=self._commit_consumed,
            inbox=self._inbox,
            tasks=self._tasks,
            metrics=self._metrics,
        )
        self._group = self._membership()(context)
        if self.settings.enable_auto_commit:
            self._auto_commit = AutoCommitter(
                self.settings.auto_commit_interval_ms, self._commit_offsets, self._tasks
            )
        self._group.listener = self._listener
        self._wakers = (*self._wakers, self._group.turns.ready)
        self._group.start()

    def _epochs(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The epochs of the assigned ``partitions`` (see :mod:`.fetching.subscription`)."""
        found = ((tp, self._subscriptions.get(tp)) for tp in partitions)
        return {tp: state.epoch for tp, state in found if state is not None}

    async def _position_from_commits(self, partitions: set[TopicPartition]) -> None:
        """Start new ``partitions`` at their committed offsets, or by ``auto_offset_reset``
        (for the group, when it assigns them); a transient failure leaves that to a
        background task, which tries until it succeeds."""
        epochs = self._epochs(partitions)
        try:
            await self._apply_commits(epochs)
        except (KafkawireError, OSError) as exc:
            if not is_transient(exc):
                raise
            _log.info("looking up the committed offsets failed, trying again: %s", exc)
            self._position_in_background(epochs)

    def _position_in_background(self, epochs: dict[TopicPartition, int]) -> None:
        work = functools.partial(self._apply_commits, epochs)
        self._background("positioning partitions from the group's commits", work)

    async def _apply_commits(self, epochs: dict[TopicPartition, int]) -> None:
        """Position the partitions of ``epochs`` still at those epochs: a partition seeked,
        reset or revoked since keeps what the application or the group chose."""
        current = {tp: e for tp, e in epochs.items() if self._epochs([tp]).get(tp) == e}
        if not current:
            return
        committed = await self._committed(set(current))
        for tp, found in committed.items():  # each dropped if it moved on meanwhile
            offset, leader_epoch = (
                (None, -1) if found is None else (found.offset, found.leader_epoch)
            )
            self._subscriptions.committed_offset_found(tp, current[tp], offset, leader_epoch)

    def _consumed(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """The position of every assigned partition after what the application has got."""
        held_back: dict[TopicPartition, int] = {}
        for r in self._iterated:  # fetched for iteration but not yielded yet
            held_back.setdefault(TopicPartition(r.topic, r.partition), r.offset)
        consumed = {}
        for tp, position in self._subscriptions.positions().items():
            epoch = self._subscriptions.state(tp).leader_epoch
            consumed[tp] = OffsetAndMetadata(held_back.get(tp, position), "", epoch)
        return consumed

    def _generation(self) -> Generation:
        """Who asks: the member's generation (outside a group, none)."""
        return self._group.generation if self._group is not None else Generation()

    def _check_in_group(self) -> None:
        """A commit names the member's generation: out of the group it has none."""
        if self._group is not None and not self._group.holds_generation:
            raise CommitFailedError(
                f"group {self.settings.group_id}: the consumer is not a member of the group "
                "now (thrown out, or not joined yet), so it cannot commit; its partitions are "
                "revoked or lost in the next poll, and their next owner reads from the last "
                "committed offsets"
            )

    async def _as_member(self, call: Callable[[Generation], Awaitable[T]]) -> T:
        """``call(generation)``, and again with the next member epoch while the coordinator
        refuses the one sent as stale (STALE_MEMBER_EPOCH, KIP-848: the epoch moved on and a
        heartbeat is bringing it), for up to ``default_api_timeout_ms``."""
        deadline = time.monotonic() + self.settings.default_api_timeout_ms / 1000
        while True:
            generation = self._generation()
            try:
                return await call(generation)
            except StaleMemberEpochError:
                left = deadline - time.monotonic()
                if self._group is None or not await self._group.generation_after(
                    generation, max(left, 0.0)
                ):
                    raise

    async def _commit_offsets(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        if not offsets:
            return  # nothing to commit: no group needed (Java's commitSync of nothing)
        assert self._offsets is not None
        store = self._offsets
        self._check_in_group()
        sent = time.monotonic()
        await self._as_member(lambda generation: store.commit(offsets, generation))
        self._metrics.committed((time.monotonic() - sent) * 1000)

    async def _committed(
        self, partitions: set[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's commits of ``partitions``; a KIP-848 member asks as itself."""
        assert self._offsets is not None
        store = self._offsets
        if self.settings.group_protocol != "consumer" or self._group is None:
            return await store.committed(partitions)
        return await self._as_member(lambda generation: store.committed(partitions, generation))

    async def _commit_consumed(self, partitions: set[TopicPartition] | None) -> None:
        if self._auto_commit is not None:  # an older auto-commit must not land after this
            await self._auto_commit.settled()
        consumed = self._consumed()
        if partitions is not None:
            consumed = {tp: o for tp, o in consumed.items() if tp in partitions}
        await self._commit_offsets(consumed)

    async def commit(
        self, offsets: Mapping[TopicPartition, int | tuple[int, str]] | None = None
    ) -> None:
        """Commit the position after every record the application has got, or ``offsets``
        (partition -> offset of the next record to read, or ``(offset, metadata)``).

        A member that is not in its group now (thrown out, or left after
        ``max_poll_interval_ms``) cannot commit: :class:`CommitFailedError`."""
        self._check_running()
        if self._offsets is None:
            raise ConsumerStateError("commit() needs a group_id")
        if offsets is None:
            await self._commit_consumed(None)
            return
        given = {
            tp: OffsetAndMetadata(*v) if isinstance(v, tuple) else OffsetAndMetadata(v)
            for tp, v in offsets.items()
        }
        await self._commit_offsets(given)

    async def committed(self, partition: TopicPartition) -> OffsetAndMetadata | None:
        """The group's committed offset of ``partition`` (``None`` if it has none)."""
        self._check_running()
        if self._offsets is None:
            raise ConsumerStateError("committed() needs a group_id")
        return (await self._committed({partition}))[partition]
