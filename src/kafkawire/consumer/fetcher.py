"""The fetcher: long-polling Fetch requests to every leader at once, and a bounded buffer.

Rules this module keeps:

- One Fetch in flight per leader, naming every fetchable partition it leads; the requests to
  different leaders run in parallel, each on the broker's fetch connection (so a long poll
  never holds up a commit or a heartbeat).
- Prefetch is bounded: a partition is fetched again while the application works through its
  buffered data only if fewer than ``_PREFETCH`` responses for it are waiting, so memory
  stays within about that many ``max_partition_fetch_bytes`` per partition (and
  ``fetch_max_bytes`` per response).
- Data is tagged with the partition's epoch and the offset it was fetched at; a seek, reset
  or new assignment changes the epoch, and data of another epoch, or fetched at an offset that
  is no longer the position, is dropped, never returned.
- Retriable errors (a moved leader, a lost connection) make the metadata stale and back the
  broker off for a moment; an offset out of range applies ``auto_offset_reset``; other errors
  are handed to the application by the next ``getmany``, and a partition whose data cannot be
  read is not fetched again until it is seeked.
- Records are built only as they are handed out (:func:`~.record.consumer_records`): a
  buffered response holds the fetched bytes and the batch headers, not record objects.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import (
    ClientClosedError,
    KafkawireError,
    OffsetOutOfRangeError,
    error_for_code,
)
from kafkawire.records import Batch, ReadCommittedFilter, decode_batches

from ._waiting import wait_event
from .errors import NoOffsetForPartitionError
from .errors import OffsetOutOfRangeError as OutOfRangeNoReset
from .fetch_request import answered, build_fetch
from .offsets import OffsetLookup
from .record import ConsumerRecord, consumer_records
from .settings import ConsumerSettings
from .subscription import SubscriptionState

__all__ = ["Fetcher"]

_log = logging.getLogger(__name__)

_PREFETCH = 2  # responses buffered per partition, the one being read included
_IDLE = 60.0  # seconds the loop sleeps with nothing to do (any change wakes it sooner)


@dataclass(slots=True)
class _Completed:
    """One partition's part of one Fetch response, as it is read."""

    epoch: int
    fetch_offset: int
    batches: deque[tuple[Batch, bool]]  # (batch, visible at the isolation level)
    next_offset: int
    pending: list[ConsumerRecord] = field(default_factory=list)  # built, not handed out yet
    pending_end: int = 0  # the next offset once ``pending`` is handed out


class Fetcher:
    """Keeps data flowing for the assigned partitions; :meth:`drain` hands it out."""

    def __init__(
        self,
        cluster: Cluster,
        settings: ConsumerSettings,
        subscriptions: SubscriptionState,
        lookup: OffsetLookup,
    ) -> None:
        self._cluster = cluster
        self._settings = settings
        self._subscriptions = subscriptions
        self._lookup = lookup
        self._buffers: dict[TopicPartition, deque[_Completed]] = {}
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._backoff_until: dict[int | TopicPartition, float] = {}
        self._failed: dict[TopicPartition, int] = {}  # partition -> epoch it failed at
        self._errors: list[BaseException] = []
        self._wake = asyncio.Event()
        self.ready = asyncio.Event()  # data or an error for getmany
        self._task: asyncio.Task[None] | None = None

    # --- life cycle --------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="kafkawire-fetcher")

    async def close(self) -> None:
        tasks = [t for t in (self._task, *self._in_flight.values()) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._in_flight.clear()

    def wake(self) -> None:
        """Plan again: the assignment, a position or a pause changed."""
        self._wake.set()

    # --- handing out -------------------------------------------------------------------------

    def raise_errors(self) -> None:
        """Raise the first error the background work stored for the application."""
        if self._errors:
            error = self._errors.pop(0)
            raise error

    def drain(
        self, max_records: int, partitions: Collection[TopicPartition] = ()
    ) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Up to ``max_records`` buffered records (of ``partitions``, if named), moving each
        partition's position past what it hands out."""
        out: dict[TopicPartition, list[ConsumerRecord]] = {}
        remaining = max_records
        for tp in list(self._buffers):
            if remaining <= 0:
                break
            if partitions and tp not in partitions:
                continue
            taken = self._drain_partition(tp, remaining)
            if taken:
                out[tp] = taken
                remaining -= len(taken)
            queue = self._buffers.get(tp)
            if queue is not None:
                self._buffers[tp] = self._buffers.pop(tp)  # the others go first next time
        if remaining == max_records:
            self.ready.clear()
        return out

    def _drain_partition(self, tp: TopicPartition, wanted: int) -> list[ConsumerRecord]:
        queue = self._buffers[tp]
        state = self._subscriptions.get(tp)
        out: list[ConsumerRecord] = []
        if state is not None and not state.readable:
            return out
        settings = self._settings
        while queue and len(out) < wanted:
            done = queue[0]
            if (
                state is None
                or done.epoch != state.epoch
                or (not done.pending and done.fetch_offset != state.position)
            ):
                queue.clear()  # stale: what follows was fetched from it
                break
            if not done.pending:
                if not done.batches:
                    queue.popleft()
                    continue
                batch, visible = done.batches[0]
                if visible:
                    assert state.position is not None
                    done.pending = consumer_records(
                        tp,
                        batch,
                        state.position,
                        settings.key_deserializer,
                        settings.value_deserializer,
                    )
                done.batches.popleft()
                done.pending_end = batch.next_offset
                done.fetch_offset = batch.next_offset  # read from here on
                if not done.pending:
                    state.position = batch.next_offset
                    continue
            take = done.pending[: wanted - len(out)]
            del done.pending[: len(take)]
            out += take
            last = take[-1]
            state.leader_epoch = last.leader_epoch
            state.position = done.pending_end if not done.pending else last.offset + 1
        if not queue:
            del self._buffers[tp]
            self._wake.set()  # room to fetch it again
        elif len(queue) < _PREFETCH:
            self._wake.set()
        return out

    # --- the background loop -----------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                await self._reset_positions()
                delay = await self._launch()
            except ClientClosedError:
                return
            except KafkawireError as exc:
                if not exc.retriable:
                    self.fail(exc)
                self._cluster.mark_metadata_stale()
                delay = self._cluster.settings.backoff.initial
            await wait_event(self._wake, delay)

    def fail(self, error: BaseException) -> None:
        """Hand ``error`` to the application's next ``getmany``."""
        self._errors.append(error)
        self.ready.set()

    async def _reset_positions(self) -> None:
        wanted = self._subscriptions.needing_reset()
        if not wanted:
            return
        epochs = {tp: self._subscriptions.state(tp).epoch for tp in wanted}
        none = [tp for tp, policy in wanted.items() if policy == "none"]
        if none:
            self.fail(NoOffsetForPartitionError(none))
            for tp in none:
                self._subscriptions.state(tp).reset = None  # reported: wait for a seek
        earliest = [tp for tp, policy in wanted.items() if policy == "earliest"]
        latest = [tp for tp, policy in wanted.items() if policy == "latest"]
        found = {}
        if earliest:
            found.update(await self._lookup.beginning(earliest))
        if latest:
            found.update(await self._lookup.end(latest))
        for tp, offset in found.items():
            state = self._subscriptions.get(tp)
            if state is not None and state.epoch == epochs[tp] and state.reset is not None:
                state.position, state.reset = offset, None
                _log.debug("reset %s/%s to offset %d", tp.topic, tp.partition, offset)

    async def _launch(self) -> float:
        """Send a Fetch to each leader that has none in flight; the time until a backed-off
        broker may be tried again (or a long wait when nothing is due)."""
        now = time.monotonic()
        fetchable = [
            tp
            for tp in self._subscriptions.fetchable()
            if len(self._buffers.get(tp, ())) < _PREFETCH
            and self._failed.get(tp, -1) != self._subscriptions.state(tp).epoch
            and self._backoff_until.get(tp, 0) <= now
        ]
        waits = [t - now for t in self._backoff_until.values() if t > now]
        delay = min(waits, default=_IDLE)
        if not fetchable:
            return delay
        metadata = await self._cluster.metadata({tp.topic for tp in fetchable})
        plans: dict[int, dict[TopicPartition, int]] = {}
        for tp in fetchable:
            leader = metadata.leader_for(tp.topic, tp.partition)
            if leader in self._in_flight or self._backoff_until.get(leader, 0) > now:
                continue
            plans.setdefault(leader, {})[tp] = self._next_offset(tp)
        for leader, offsets in plans.items():
            task = asyncio.create_task(self._fetch(leader, offsets))
            self._in_flight[leader] = task
        return delay

    def _next_offset(self, tp: TopicPartition) -> int:
        queue = self._buffers.get(tp)
        if queue:
            return queue[-1].next_offset
        position = self._subscriptions.state(tp).position
        assert position is not None
        return position

    async def _fetch(self, leader: int, offsets: dict[TopicPartition, int]) -> None:
        try:
            await self._fetch_once(leader, offsets)
        finally:
            self._in_flight.pop(leader, None)
            self._wake.set()

    async def _fetch_once(self, leader: int, offsets: dict[TopicPartition, int]) -> None:
        settings = self._settings
        epochs = {tp: self._subscriptions.state(tp).epoch for tp in offsets}
        try:
            plan = await build_fetch(
                self._cluster,
                leader,
                offsets,
                max_wait_ms=settings.fetch_max_wait_ms,
                min_bytes=settings.fetch_min_bytes,
                max_bytes=settings.fetch_max_bytes,
                partition_max_bytes=settings.max_partition_fetch_bytes,
                isolation_level=int(settings.read_committed),
            )
            response = await self._cluster.send(plan.request, node_id=leader, retry=False)
        except ClientClosedError:
            return
        except KafkawireError as exc:
            if not exc.retriable:
                self.fail(exc)
            _log.debug("fetch from broker %d failed, backing off: %s", leader, exc)
            self._cluster.mark_metadata_stale()
            self._backoff_until[leader] = time.monotonic() + self._backoff()
            return
        error = error_for_code(getattr(response, "error_code", 0), f"Fetch from {leader}")
        if error is not None:
            self.fail(error)
            return
        parts = answered(response, plan.names)
        total = sum(len(data.records or b"") for _, data in parts)
        for topic, data in parts:
            tp = TopicPartition(topic, data.partition_index)
            if tp in offsets:
                self._take(tp, offsets[tp], epochs[tp], data, total)

    def _backoff(self) -> float:
        return self._settings.retry_backoff_ms / 1000

    def _take(self, tp: TopicPartition, offset: int, epoch: int, data: Any, total: int) -> None:
        """Buffer one partition's answer, or act on its error."""
        state = self._subscriptions.get(tp)
        if state is None or state.epoch != epoch:
            return  # seeked or unassigned while the request was out
        error = error_for_code(data.error_code, f"{tp.topic}/{tp.partition} at offset {offset}")
        if isinstance(error, OffsetOutOfRangeError):
            if offset != state.position:
                return  # prefetched past a position that has since moved
            if self._subscriptions.default_reset == "none":
                self._failed[tp] = epoch
                self.fail(OutOfRangeNoReset(tp, offset))
            else:
                _log.info("offset %d out of range for %s/%s: resetting", offset, *tp)
                self._subscriptions.request_reset([tp])
            return
        if error is not None:
            if error.retriable:
                self._cluster.mark_metadata_stale()
                self._backoff_until[tp] = time.monotonic() + self._backoff()
            else:
                self._failed[tp] = epoch
                self.fail(error)
            return
        state.high_watermark = data.high_watermark
        state.last_stable_offset = getattr(data, "last_stable_offset", -1)
        try:
            batches = self._batches(data, total)
        except KafkawireError as exc:
            self._failed[tp] = epoch
            self.fail(exc)
            return
        if batches:
            done = _Completed(epoch, offset, batches, batches[-1][0].next_offset)
            self._buffers.setdefault(tp, deque()).append(done)
            self.ready.set()

    def _batches(self, data: Any, total: int) -> deque[tuple[Batch, bool]]:
        """The batches of one partition's records with their visibility, in offset order
        (read_committed needs every batch, control ones included, to see the aborts)."""
        records = data.records or b""
        limit = self._settings.max_decompressed_bytes_per_fetch
        share = None
        if limit is not None:  # this partition's part of the response's bound
            share = max(1, limit * len(records) // max(total, 1))
        accepts = ReadCommittedFilter(getattr(data, "aborted_transactions", None)).accepts
        return deque(
            (batch, accepts(batch))
            for batch in decode_batches(
                records,
                check_crcs=self._settings.check_crcs,
                max_total_decompressed_size=share,
            )
        )
