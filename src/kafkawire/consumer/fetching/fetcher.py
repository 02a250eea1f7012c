"""The fetcher: long-polling Fetch requests to every leader at once, and a bounded buffer.

Rules this module keeps:

- One Fetch in flight per leader, for every fetchable partition it leads; the requests to
  different leaders run in parallel, each on the broker's fetch connection (so a long poll
  never holds up a commit or a heartbeat). Each leader gets a fetch session
  (:mod:`.fetch_session`) where it keeps one: then a request names only the partitions that
  changed, and an answer only those with news.
- Each partition is fetched with the leader epoch the metadata gives (the broker fences a
  stale one); after the leader or its epoch changes, a position whose epoch is known is
  validated (:mod:`.leader_epochs`) before it is fetched again, and a log truncated below it
  moves it back (or, with ``auto_offset_reset="none"``, is a :class:`LogTruncationError`).
- Prefetch is bounded: a partition is fetched again while the application works through its
  buffered data only if fewer than ``_PREFETCH`` responses for it are waiting, so memory
  stays within about that many ``max_partition_fetch_bytes`` per partition (and
  ``fetch_max_bytes`` per response).
- Data is tagged with the partition's epoch and the offset it was fetched at; a seek, reset
  or new assignment changes the epoch, and data of another epoch, or fetched at an offset that
  is no longer the position, is dropped, never returned. Whatever the loop or a fetch writes
  of a partition (a reset's offset, a high watermark, a validation, a position handed out)
  names the epoch it was asked at, and is dropped if that moved on (:mod:`.subscription`).
- Retriable errors (a moved leader, a fenced leader epoch, a lost connection) back the
  partition or broker off for a moment, and make the metadata stale where it may be; an
  offset out of range applies ``auto_offset_reset``; other errors go to the application's
  next poll through the consumer's :class:`~kafkawire.consumer.inbox.Inbox`, and a partition
  whose data cannot be read is not fetched again until it is seeked. An answer naming a
  partition that was not asked for is dropped (as Java drops it), the broker is backed off
  and the next fetch is full; that is logged as a warning once per broker.
- Records are read as they are handed out (:mod:`.completed_fetch`): positions only move
  forward, no offset is handed out twice, and a record or batch that cannot be read is an
  error raised after the records before it were handed out, with the position at it.
  ``drain`` stops at such an error: it returns what it took before it, and the next
  ``drain`` starts with that partition and raises it (Java's ``FetchCollector``).
- The loop and each fetch run as tasks of :mod:`kafkawire.consumer.tasks` (which also
  cancels them on close): transient errors (a lost or refused
  connection) are retried after a backoff, and an unexpected one reaches the application.
- Metrics (:mod:`kafkawire.consumer.metrics`) are recorded per Fetch answer, per ``drain``
  and per partition a ``drain`` hands records of (its lag); never per record.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import deque
from collections.abc import Collection
from typing import Any

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.consumer._waiting import wait_event
from kafkawire.consumer.errors import NoOffsetForPartitionError
from kafkawire.consumer.errors import OffsetOutOfRangeError as OutOfRangeNoReset
from kafkawire.consumer.inbox import Inbox
from kafkawire.consumer.metrics import ConsumerMetrics
from kafkawire.consumer.offsets import OffsetLookup
from kafkawire.consumer.settings import ConsumerSettings
from kafkawire.consumer.tasks import BackgroundTasks, is_transient
from kafkawire.errors import (
    ClientClosedError,
    KafkawireError,
    OffsetOutOfRangeError,
    ProtocolError,
    error_for_code,
)
from kafkawire.operations.fetch_request import (
    FetchOptions,
    PartitionFetch,
    answered,
    fetch_request,
    fetch_version,
)
from kafkawire.records import Batch, ReadCommittedFilter, RecordsError, decode_batches

from .completed_fetch import CompletedFetch, unreadable
from .fetch_session import FetchSession, SessionRequest, is_session_error
from .leader_epochs import EpochEnd, can_validate, epoch_ends
from .record import ConsumerRecord
from .subscription import SubscriptionState

__all__ = ["Fetcher"]

_log = logging.getLogger(__name__)

_PREFETCH = 2  # responses buffered per partition, the one being read included
_IDLE = 60.0  # seconds the loop sleeps with nothing to do (any change wakes it sooner)


class Fetcher:
    """Keeps data flowing for the assigned partitions; :meth:`drain` hands it out."""

    def __init__(
        self,
        cluster: Cluster,
        settings: ConsumerSettings,
        subscriptions: SubscriptionState,
        lookup: OffsetLookup,
        *,
        tasks: BackgroundTasks,
        inbox: Inbox,
        metrics: ConsumerMetrics,
    ) -> None:
        self._cluster = cluster
        self._tasks = tasks
        self._inbox = inbox
        self._metrics = metrics
        self._settings = settings
        self._subscriptions = subscriptions
        self._lookup = lookup
        self._buffers: dict[TopicPartition, deque[CompletedFetch]] = {}
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._sessions: dict[int, FetchSession] = {}
        self._options = FetchOptions(
            max_wait_ms=settings.fetch_max_wait_ms,
            min_bytes=settings.fetch_min_bytes,
            max_bytes=settings.fetch_max_bytes,
            isolation_level=int(settings.read_committed),
        )
        self._backoff_until: dict[int | TopicPartition, float] = {}
        self._failed: dict[TopicPartition, int] = {}  # partition -> epoch it failed at
        self._warned: set[int] = set()  # brokers whose dropped answers were warned of
        self._wake = asyncio.Event()
        self.ready = asyncio.Event()  # data for getmany
        self.started_at: float | None = None  # time.monotonic() of start()
        self.last_answer_at: float | None = None  # of the last Fetch answered

    # --- life cycle --------------------------------------------------------------------------

    def start(self) -> None:
        self.started_at = time.monotonic()
        self._tasks.spawn("fetcher", self._run, lasting=True)

    def stopped_partitions(self) -> int:
        """Assigned partitions not fetched until they are seeked (an error stopped them)."""
        states = ((self._subscriptions.get(tp), epoch) for tp, epoch in self._failed.items())
        return sum(1 for state, epoch in states if state is not None and state.epoch == epoch)

    def wake(self) -> None:
        """Plan again: the assignment, a position or a pause changed."""
        self._wake.set()

    # --- handing out -------------------------------------------------------------------------

    def drain(
        self, max_records: int, partitions: Collection[TopicPartition] = ()
    ) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Up to ``max_records`` buffered records (of ``partitions``, if named), moving each
        partition's position past what it hands out. A record or batch that cannot be read
        ends it: what was taken before is returned, and the next call raises the error (it
        starts with that partition), as Java's ``FetchCollector`` does."""
        out: dict[TopicPartition, list[ConsumerRecord]] = {}
        remaining = max_records
        for tp in list(self._buffers):
            if remaining <= 0:
                break
            if partitions and tp not in partitions:
                continue
            taken, error = self._drain_partition(tp, remaining)
            if taken:
                out[tp] = taken
                remaining -= len(taken)
            if error is not None:
                self._buffers = {tp: self._buffers.pop(tp), **self._buffers}  # first next time
                if out:
                    self._metrics.consumed(max_records - remaining)
                    return out
                raise error
            queue = self._buffers.get(tp)
            if queue is not None:
                self._buffers[tp] = self._buffers.pop(tp)  # the others go first next time
        if remaining == max_records:
            self.ready.clear()
        else:
            self._metrics.consumed(max_records - remaining)
        return out

    def _drain_partition(
        self, tp: TopicPartition, wanted: int
    ) -> tuple[list[ConsumerRecord], KafkawireError | None]:
        queue = self._buffers[tp]
        state = self._subscriptions.get(tp)
        out: list[ConsumerRecord] = []
        if state is not None and not state.readable:
            return out, None
        settings = self._settings
        error = None
        while queue and len(out) < wanted and error is None:
            done = queue[0]
            if state is None or done.epoch != state.epoch or done.position != state.position:
                queue.clear()  # stale: what follows was fetched from it
                break
            taken, error = done.take(
                wanted - len(out), settings.key_deserializer, settings.value_deserializer
            )
            out += taken
            if done.position != state.position:
                self._subscriptions.consumed(tp, done.epoch, done.position, done.leader_epoch)
            if done.exhausted:
                queue.popleft()
        if out and state is not None:
            self._metrics.partition_read(tp, state)
        if not queue:
            del self._buffers[tp]
            self._wake.set()  # room to fetch it again
        elif len(queue) < _PREFETCH:
            self._wake.set()
        return out, error

    # --- the background loop -----------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self._reset_positions()
                await self._validate_positions()
                delay = await self._launch()
            except ClientClosedError:
                return
            except (KafkawireError, OSError) as exc:  # others: the task's owner reports them
                if not is_transient(exc):
                    self._inbox.put(exc)
                self._cluster.mark_metadata_stale()
                delay = self._cluster.settings.backoff.initial
            await wait_event(self._wake, delay)

    async def _reset_positions(self) -> None:
        wanted = self._subscriptions.needing_reset()
        if not wanted:
            return
        epochs = {tp: self._subscriptions.state(tp).epoch for tp in wanted}
        none = [tp for tp, policy in wanted.items() if policy == "none"]
        if none:
            self._inbox.put(NoOffsetForPartitionError(none))
            for tp in none:
                self._subscriptions.reset_refused(tp, epochs[tp])  # reported: wait for a seek
        earliest = [tp for tp, policy in wanted.items() if policy == "earliest"]
        latest = [tp for tp, policy in wanted.items() if policy == "latest"]
        found = {}
        if earliest:
            found.update(await self._lookup.beginning(earliest))
        if latest:
            found.update(await self._lookup.end(latest))
        for tp, offset in found.items():
            if self._subscriptions.reset_found(tp, epochs[tp], offset):
                _log.debug("reset %s/%s to offset %d", tp.topic, tp.partition, offset)

    async def _validate_positions(self) -> None:
        """Ask the leaders of partitions whose leader changed whether their logs still reach
        the positions (KIP-320), and apply the answers."""
        now = time.monotonic()
        wanted = [tp for tp in self._subscriptions.needing_validation() if self._due(tp, now)]
        if not wanted:
            return
        states = {tp: self._subscriptions.state(tp) for tp in wanted}
        epochs = {tp: state.epoch for tp, state in states.items()}
        answers = await epoch_ends(
            self._cluster, {tp: state.leader_epoch for tp, state in states.items()}
        )
        for tp, answer in answers.items():  # one leader's failure is its partitions' failure
            self._apply_validation(tp, epochs[tp], answer)

    def _apply_validation(
        self,
        tp: TopicPartition,
        epoch: int,
        answer: EpochEnd | KafkawireError | None,
        *,
        diverged: bool = False,
    ) -> None:
        if answer is None:
            answer = ProtocolError(f"OffsetForLeaderEpoch did not answer {tp.topic}/{tp.partition}")
        if isinstance(answer, KafkawireError):
            self._partition_failed(tp, epoch, answer)
            return
        state = self._subscriptions.get(tp)
        position = state.position if state is not None else None
        truncated = self._subscriptions.complete_validation(tp, epoch, answer, diverged=diverged)
        if truncated is not None:
            _log.warning("%s", truncated)
            self._failed[tp] = epoch
            self._inbox.put(truncated)
        elif state is not None and state.position != position:
            _log.info(
                "log truncation detected for %s/%s at offset %s: now reading from %s",
                tp.topic,
                tp.partition,
                position,
                "the reset policy" if state.position is None else state.position,
            )

    def _due(self, tp: TopicPartition, now: float) -> bool:
        """Not failed at its current epoch, nor backed off."""
        state = self._subscriptions.state(tp)
        return self._failed.get(tp, -1) != state.epoch and self._backoff_until.get(tp, 0) <= now

    async def _launch(self) -> float:
        """Send a Fetch to each leader that has none in flight; the time until a backed-off
        broker may be tried again (or a long wait when nothing is due)."""
        now = time.monotonic()
        fetchable = [
            tp
            for tp in self._subscriptions.fetchable()
            if len(self._current_buffer(tp)) < _PREFETCH and self._due(tp, now)
        ]
        waits = [t - now for t in self._backoff_until.values() if t > now]
        delay = min(waits, default=_IDLE)
        if not fetchable:
            return delay
        metadata = await self._cluster.metadata({tp.topic for tp in fetchable})
        plans: dict[int, dict[TopicPartition, tuple[PartitionFetch, int]]] = {}
        for tp in fetchable:
            leader = metadata.leader_for(tp.topic, tp.partition)
            leader_epoch = metadata.leader_epoch(tp.topic, tp.partition)
            state = self._subscriptions.get(tp)
            if state is None or not state.fetchable:
                continue  # unassigned, seeked to an end, paused... while metadata was awaited
            if await self._leader_changed(tp, leader, leader_epoch):
                self._buffers.pop(tp, None)  # fetched from the old leader: maybe truncated
                continue
            if leader in self._in_flight or self._backoff_until.get(leader, 0) > now:
                continue
            fetch = PartitionFetch(
                self._next_offset(tp), leader_epoch, self._settings.max_partition_fetch_bytes
            )
            plans.setdefault(leader, {})[tp] = (fetch, state.epoch)
        for leader, wanted in plans.items():
            self._in_flight[leader] = self._tasks.spawn(
                f"fetch from broker {leader}", functools.partial(self._fetch, leader, wanted)
            )
        return delay

    async def _leader_changed(self, tp: TopicPartition, leader: int, leader_epoch: int) -> bool:
        """Whether ``tp``'s position must be validated before it is fetched from ``leader``
        (or it changed meanwhile: then it is looked at again on the next turn)."""
        state = self._subscriptions.state(tp)
        if state.current_leader == (leader, leader_epoch):
            return False
        epoch = state.epoch
        checkable = state.leader_epoch >= 0 and await can_validate(self._cluster, leader)
        # True too if it was seeked, reset or unassigned while the broker was asked
        must = self._subscriptions.leader_seen(tp, epoch, (leader, leader_epoch), checkable)
        if must:
            self._wake.set()  # look at it again (validate) on the next turn of the loop
        return must

    def _current_buffer(self, tp: TopicPartition) -> deque[CompletedFetch]:
        """What is buffered for ``tp``, dropped first if it is stale (of another epoch, or
        not at the position): a prefetch goes on from fresh data only."""
        queue = self._buffers.get(tp, deque())
        state = self._subscriptions.get(tp)
        if queue and (
            state is None or (queue[0].epoch, queue[0].position) != (state.epoch, state.position)
        ):
            del self._buffers[tp]
            return deque()
        return queue

    def _next_offset(self, tp: TopicPartition) -> int:
        queue = self._current_buffer(tp)
        if queue:
            return queue[-1].next_offset
        position = self._subscriptions.state(tp).position
        assert position is not None  # fetchable
        return position

    async def _fetch(
        self, leader: int, wanted: dict[TopicPartition, tuple[PartitionFetch, int]]
    ) -> None:
        try:
            await self._fetch_once(leader, wanted)
        except Exception:
            self._backoff_until[leader] = time.monotonic() + self._backoff()  # not again at once
            raise  # the task's owner reports it
        finally:
            self._in_flight.pop(leader, None)
            self._wake.set()

    async def _fetch_once(
        self, leader: int, wanted: dict[TopicPartition, tuple[PartitionFetch, int]]
    ) -> None:
        session = self._sessions.setdefault(leader, FetchSession(leader))
        try:
            version, topic_ids = await fetch_version(
                self._cluster, leader, {tp.topic for tp in wanted}
            )
        except ClientClosedError:
            return
        except (KafkawireError, OSError) as exc:
            self._broker_failed(leader, exc)
            return
        sent = session.build({tp: f for tp, (f, _) in wanted.items()}, topic_ids, version)
        started = time.monotonic()
        try:
            response = await self._send(leader, version, sent)
        except ClientClosedError:
            return
        except (KafkawireError, OSError) as exc:
            session.failed(exc)
            if is_session_error(exc) and not sent.full:
                _log.debug("fetch session with broker %d lost (%s): a full fetch next", leader, exc)
            else:
                self._broker_failed(leader, exc)
            return
        except BaseException:
            session.failed()  # cancelled: the broker may or may not have seen it
            raise
        error = error_for_code(getattr(response, "error_code", 0), f"Fetch from {leader}")
        if error is not None:
            session.failed(error)
            self._inbox.put(error)
            return
        parts = [
            (TopicPartition(topic, data.partition_index), data)
            for topic, data in answered(response, sent.names)
        ]
        problem = session.answered(
            sent, getattr(response, "session_id", 0), [tp for tp, _ in parts]
        )
        if problem is not None:
            self._answer_dropped(leader, problem)
            return
        total = sum(len(data.records or b"") for _, data in parts)
        self.last_answer_at = now = time.monotonic()
        self._metrics.fetched((now - started) * 1000, total)
        for tp, data in parts:
            self._take(tp, sent.partitions[tp].fetch_offset, wanted[tp][1], data, total)

    async def _send(self, leader: int, version: int, sent: SessionRequest) -> Any:
        plan = fetch_request(
            version,
            sent.topic_ids,
            sent.to_send,
            self._options,
            session_id=sent.session_id,
            session_epoch=sent.epoch,
            forgotten=sent.to_forget,
        )
        return await self._cluster.send(plan.request, node_id=leader, retry=False)

    def _answer_dropped(self, leader: int, problem: str) -> None:
        """A broker's answer that cannot be taken: back off, as after a failed fetch (it may
        answer the same way again: no hot loop), and warn once per broker."""
        level = logging.DEBUG if leader in self._warned else logging.WARNING
        self._warned.add(leader)
        _log.log(
            level,
            "%s: the answer is dropped; the next fetch, full, goes after retry_backoff_ms",
            problem,
        )
        self._backoff_until[leader] = time.monotonic() + self._backoff()

    def _broker_failed(self, leader: int, error: KafkawireError | OSError) -> None:
        if not is_transient(error):
            self._inbox.put(error)
        _log.debug("fetch from broker %d failed, backing off: %s", leader, error)
        self._cluster.mark_metadata_stale()
        self._backoff_until[leader] = time.monotonic() + self._backoff()

    def _partition_failed(self, tp: TopicPartition, epoch: int, error: KafkawireError) -> None:
        """Retry a retriable error after a backoff (with fresh metadata if it says the
        metadata is stale: a moved leader, a fenced leader epoch); hand the others to the
        application, and fetch the partition no more until it is seeked."""
        if error.retriable:
            if getattr(error, "invalid_metadata", False):
                self._cluster.mark_metadata_stale()
            self._backoff_until[tp] = time.monotonic() + self._backoff()
        else:
            self._failed[tp] = epoch
            self._inbox.put(error)

    def _backoff(self) -> float:
        return self._settings.retry_backoff_ms / 1000

    def _take(self, tp: TopicPartition, offset: int, epoch: int, data: Any, total: int) -> None:
        """Buffer one partition's answer, or act on its error."""
        state = self._subscriptions.at_epoch(tp, epoch)
        if state is None:
            return  # seeked or unassigned while the request was out
        error = error_for_code(data.error_code, f"{tp.topic}/{tp.partition} at offset {offset}")
        if isinstance(error, OffsetOutOfRangeError):
            if offset != state.position:
                return  # prefetched past a position that has since moved
            if self._subscriptions.default_reset == "none":
                self._failed[tp] = epoch
                self._inbox.put(OutOfRangeNoReset(tp, offset))
            else:
                _log.info("offset %d out of range for %s/%s: resetting", offset, *tp)
                self._subscriptions.out_of_range(tp, epoch)
            return
        if error is not None:
            self._partition_failed(tp, epoch, error)
            return
        diverging = getattr(data, "diverging_epoch", None)
        if diverging is not None and diverging.epoch >= 0:
            # The log parts from what was read before ``offset`` (KIP-320, Fetch v12+): no
            # records come with it. Answers to a prefetch past the position are stale.
            if offset == state.position:
                end = EpochEnd(diverging.epoch, diverging.end_offset)
                self._apply_validation(tp, epoch, end, diverged=True)
            return
        lso = getattr(data, "last_stable_offset", -1)
        self._subscriptions.fetched(tp, epoch, data.high_watermark, lso)
        share = self._decompression_share(data, total)
        bound = self._describe_bound(share)
        batches, bad = self._batches(data, share)
        unread = None
        if bad is not None:
            self._failed[tp] = epoch  # not fetched past what cannot be read, until a seek
            at = batches[-1][0].next_offset if batches else offset
            unread = unreadable(tp, max(at, offset), bad, None, bound)
        if batches or unread is not None:
            done = CompletedFetch(
                tp, epoch, offset, batches, error=unread, decompression_bound=bound
            )
            self._buffers.setdefault(tp, deque()).append(done)
            self.ready.set()

    def _decompression_share(self, data: Any, total: int) -> int | None:
        """This partition's part of ``max_decompressed_bytes_per_fetch``, in proportion to its
        part of the response (``None``: the option is not set)."""
        limit = self._settings.max_decompressed_bytes_per_fetch
        if limit is None:
            return None
        return max(1, limit * len(data.records or b"") // max(total, 1))

    def _describe_bound(self, share: int | None) -> str:
        if share is None:
            return (
                "the default bound (64 times the bytes fetched, at least 64 MiB: "
                "max_decompressed_bytes_per_fetch is not set)"
            )
        return (
            f"{share} bytes, this partition's share of max_decompressed_bytes_per_fetch "
            f"({self._settings.max_decompressed_bytes_per_fetch})"
        )

    def _batches(
        self, data: Any, share: int | None
    ) -> tuple[deque[tuple[Batch, bool]], RecordsError | None]:
        """The batches of one partition's records with their visibility, in offset order
        (read_committed needs every batch, control ones included, to see the aborts), and the
        error that stopped the reading of their headers, if one did (the batches before it
        are kept). With ``share``, that is all they may decompress to, a batch or all."""
        bounds = {} if share is None else {"max_decompressed_size": share}
        accepts = ReadCommittedFilter(getattr(data, "aborted_transactions", None)).accepts
        batches: deque[tuple[Batch, bool]] = deque()
        try:
            for batch in decode_batches(
                data.records or b"",
                check_crcs=self._settings.check_crcs,
                max_total_decompressed_size=share,
                **bounds,
            ):
                batches.append((batch, accepts(batch)))
        except RecordsError as exc:
            return batches, exc
        return batches, None
