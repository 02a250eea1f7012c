"""Where records wait to be sent: a queue of batches per partition, bounded in memory.

Rules:

- A record joins the last batch of its partition if the batch stays within ``batch_size``;
  otherwise it starts a new batch (a record larger than ``batch_size`` gets a batch alone).
  That last batch is the partition's *open* batch until it is taken to be sent, retried or
  dropped; :meth:`RecordAccumulator.append_to_open` adds to it in a few steps (the producer's
  common case; compiled, :mod:`.send_path` does it, reading ``_open``, ``_waiters``,
  ``wakeup`` and ``_memory`` where they are), and :meth:`RecordAccumulator.append` does
  everything else.
- The first batch of a partition is *ready* when it is full (a later batch exists, or it
  reached ``batch_size``), its linger has passed, or a flush or close is under way; and, after
  a failed attempt, once its retry backoff has passed.
- What is queued counts against ``buffer_memory``; :meth:`RecordAccumulator.reserve` waits for
  room (up to a deadline) and a batch gives its room back when it is done. Waiting sends get
  room first come, first served (as Java's ``BufferPool``), and a record that would fit is not
  queued past them. :meth:`RecordAccumulator.close` ends their waits with an error.
- A batch that is retried goes back into its partition's queue before every newer batch, so
  a partition's records keep their order; so do the two parts of a batch split after the
  broker refused it as too large (:meth:`RecordAccumulator.split_and_reenqueue`), in its
  place. A partition's batches are in (creation time, split path) order, a part before its
  sibling and both before anything newer.
- A queued batch expires ``delivery_timeout`` after it was created; :meth:`ready` says when
  the next one will, so the sender wakes for it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple

from kafkawire.cluster import TopicPartition
from kafkawire.records import Compression, HeaderInput

from .batch import Delivery, ProducerBatch, append_record
from .bulk import Columns, Span
from .errors import BufferFullError, RecordTooLargeError

__all__ = ["BufferUse", "RecordAccumulator"]


class BufferUse:
    """The bytes of ``buffer_memory`` that queued and in-flight records hold: an object with
    a slot of its own, which the compiled send path (:mod:`.send_path`) updates in place."""

    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used = 0


class _Waiter(NamedTuple):
    """A send waiting for ``size`` bytes of room; ``granted`` is set once they are its."""

    size: int
    granted: asyncio.Future[None]


class RecordAccumulator:
    """Batches per partition, the memory they hold, and when each is ready to go."""

    def __init__(
        self,
        *,
        batch_size: int,
        linger: float,
        buffer_memory: int,
        compression: Compression,
        compression_level: int | None,
        delivery_timeout: float,
    ) -> None:
        self._batch_size = batch_size
        self._linger = linger
        self._buffer_memory = buffer_memory
        self._compression = compression
        self._compression_level = compression_level
        self._delivery_timeout = delivery_timeout
        self._queues: dict[tuple[str, int], deque[ProducerBatch]] = {}
        # The last batch of each partition while records may join it (see the module doc).
        # By topic, then partition: no (topic, partition) key is made and hashed per record.
        self._open: dict[str, dict[int, ProducerBatch]] = {}
        self._memory = BufferUse()
        self._waiters: deque[_Waiter] = deque()
        self._closed_by: BaseException | None = None
        self.wakeup = asyncio.Event()  # set when something may have become ready
        self.flushing = 0  # flush() calls under way: every batch is ready
        self.closing = False
        self.unfinished: set[ProducerBatch] = set()  # queued or in flight: what flush awaits

    # --- memory ----------------------------------------------------------------------------

    @property
    def buffer_memory(self) -> int:
        return self._buffer_memory

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (the producer closed or failed)."""
        return self._closed_by is not None

    @property
    def available(self) -> int:
        """Bytes of ``buffer_memory`` not held by queued or in-flight records."""
        return self._buffer_memory - self._memory.used

    async def reserve(self, size: int, deadline: float) -> None:
        """Wait until ``size`` bytes fit in ``buffer_memory`` (until ``deadline``,
        ``time.monotonic()``), then count them as used. Cancelled, or failed, it holds none."""
        if size > self._buffer_memory:
            raise RecordTooLargeError(
                f"a record of {size} bytes is larger than buffer_memory ({self._buffer_memory})"
            )
        if self._closed_by is not None:
            raise self._closed_by
        if not self._waiters and self._memory.used + size <= self._buffer_memory:
            self._memory.used += size
            return
        waiter = _Waiter(size, asyncio.get_running_loop().create_future())
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                await waiter.granted
        except BaseException as exc:
            granted = waiter.granted
            if granted.done() and not granted.cancelled() and granted.exception() is None:
                self._give_back(size)  # room came as the wait ended: the next send takes it
            else:
                granted.cancel()
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                self._grant()  # a smaller send behind it may fit
            if isinstance(exc, TimeoutError):
                raise BufferFullError(
                    f"buffer_memory ({self._buffer_memory} bytes) stayed full for max_block_ms"
                ) from None
            raise

    def release(self, batch: ProducerBatch) -> None:
        """Give back what ``batch`` held, once it is done."""
        self._give_back(batch.memory)
        batch.memory = 0

    def unreserve(self, size: int) -> None:
        """Give back ``size`` bytes :meth:`reserve` counted that no record took."""
        self._give_back(size)

    def _give_back(self, size: int) -> None:
        self._memory.used -= size
        self._grant()

    def _grant(self) -> None:
        """Room to the sends waiting for it, in the order they came."""
        waiters, memory = self._waiters, self._memory
        while waiters and memory.used + waiters[0].size <= self._buffer_memory:
            size, granted = waiters.popleft()
            if not granted.done():
                memory.used += size
                granted.set_result(None)

    def close(self, error: BaseException) -> None:
        """End every wait for room, and refuse later ones (and every record), with ``error``."""
        self._closed_by = error
        self._open.clear()
        while self._waiters:
            granted = self._waiters.popleft().granted
            if not granted.done():
                granted.set_exception(error)

    # --- batches ---------------------------------------------------------------------------

    def append_to_open(
        self, topic: str, partition: int, key: bytes | None, value: bytes | None, memory: int
    ) -> Delivery | None:
        """Add a record without headers, stamped now, to its partition's open batch if both
        the batch and ``buffer_memory`` have room for its ``memory`` and no send waits for
        room; else change nothing and answer ``None`` (the caller then goes through
        :meth:`append`). Keys and values are bytes or ``None``: the builder cannot refuse
        such a record.
        """
        opened = self._open.get(topic)
        batch = None if opened is None else opened.get(partition)
        if batch is None:
            return None
        filled = batch.memory + memory
        use = self._memory
        if filled > self._batch_size or use.used + memory > self._buffer_memory or self._waiters:
            return None
        delivery = append_record(batch.builder, batch.future, key, value)
        batch.memory = filled
        use.used += memory
        if filled >= self._batch_size:
            self.wakeup.set()
        return delivery

    def append(  # noqa: PLR0917 - positional: it runs once per record, keywords cost there
        self,
        topic: str,
        partition: int,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[HeaderInput],
        timestamp: int,
        memory: int,
        reserved: bool = False,
    ) -> Delivery | None:
        """Add a record to its partition's last batch, or to a new one.

        Its ``memory`` is counted against ``buffer_memory`` here, unless :meth:`reserve`
        counted it already (``reserved``); with no room for it, nothing changes and the
        answer is ``None`` (the caller then waits in :meth:`reserve`). After :meth:`close`,
        the record is refused with the error given there.
        """
        if self._closed_by is not None:
            if reserved:
                self._give_back(memory)
            raise self._closed_by
        if not reserved:
            if self._memory.used + memory > self._buffer_memory or self._waiters:
                return None
            self._memory.used += memory
        queue = self._queue(topic, partition)
        batch = queue[-1] if queue else None
        # Batches fill by their records' uncompressed size, as Java's do before it has
        # learned a compression ratio: a compressed batch only comes out smaller.
        if (
            batch is None
            or batch.attempts
            or (batch.memory and batch.memory + memory > self._batch_size)
        ):
            batch = self._new_batch(TopicPartition(topic, partition), queue)
        try:
            if headers:
                offset = batch.builder.append(key, value, timestamp=timestamp, headers=headers)
            else:
                offset = batch.builder.append(key, value, timestamp=timestamp)
        except BaseException:
            # Refused (the builder changed nothing): give its memory back, and drop the batch
            # if it was made for this record alone.
            self._give_back(memory)
            self._drop_if_empty(batch)
            raise
        batch.memory += memory
        if batch.memory >= self._batch_size:
            self.wakeup.set()
        return Delivery(batch.future, offset, timestamp, key, value)

    def append_columns(
        self,
        topic: str,
        partition: int,
        columns: Columns,
        span: Span,
        *,
        reserved: int,
        soft_room: int,
    ) -> tuple[ProducerBatch | None, int, int, int, int]:
        """Append records of ``columns`` (``span``: which, in order) to the partition's open
        batch, or to a new one, while each fits in the batch and in ``reserved``, memory that
        :meth:`reserve` counted already; stop before a record once ``soft_room`` is used (-1:
        never). A record larger than ``batch_size`` gets a new batch alone.

        Returns the batch (``None`` if nothing was appended), the offset of the first record
        appended in it, how many were, the memory they took, and the memory of the record
        that did not fit ``reserved`` (0: none), for which the caller reserves more.
        """
        if self._closed_by is not None:
            raise self._closed_by
        batch = self._open.get(topic, {}).get(partition)
        if batch is None or batch.memory >= self._batch_size:
            batch = self._new_batch(TopicPartition(topic, partition), self._queue(topic, partition))
        try:
            while True:
                first = len(batch.builder)
                room = min(self._batch_size - batch.memory, reserved)
                taken, used, upcoming = columns.append_to(batch.builder, span, room, soft_room)
                if taken or not upcoming or upcoming > reserved:
                    break
                if first:  # the batch is too full for the next record: a new batch
                    batch = self._new_batch(batch.tp, self._queue(topic, partition))
                    continue
                # Larger than batch_size: alone in its batch.
                taken, used, upcoming = columns.append_to(batch.builder, span, upcoming, -1)
                break
        except BaseException:
            self._drop_if_empty(batch)
            raise
        if not taken:
            self._drop_if_empty(batch)
            return None, 0, 0, 0, upcoming
        batch.memory += used
        if batch.memory >= self._batch_size:
            self.wakeup.set()
        return batch, first, taken, used, upcoming

    def _queue(self, topic: str, partition: int) -> deque[ProducerBatch]:
        # Keyed by a plain (topic, partition) tuple, equal to (and hashed as) the
        # TopicPartition a new batch is made with: no TopicPartition is made per record.
        queue = self._queues.get((topic, partition))
        if queue is None:
            queue = self._queues[TopicPartition(topic, partition)] = deque()
        return queue

    def _drop_if_empty(self, batch: ProducerBatch) -> None:
        """Take out ``batch`` (its partition's last) if no record is in it."""
        if not len(batch.builder):
            self._queues[batch.tp].pop()
            self._closed_to_records(batch)
            batch.drop()

    def _new_batch(self, tp: TopicPartition, queue: deque[ProducerBatch]) -> ProducerBatch:
        batch = ProducerBatch(
            tp,
            compression=self._compression,
            compression_level=self._compression_level,
            created=time.monotonic(),
            unfinished=self.unfinished,
        )
        queue.append(batch)
        self._open.setdefault(tp.topic, {})[tp.partition] = batch
        # As Java's accumulator does on a new batch: the sender learns of its linger deadline
        # (or that the batch before is full now) at once, not at its next idle check.
        self.wakeup.set()
        return batch

    def ready(self, now: float, busy: set[TopicPartition]) -> tuple[list[ProducerBatch], float]:
        """The first batch of each partition that is ready (partitions in ``busy`` may not
        send now and wait), and when the next one will be, or will expire
        (``time.monotonic()``)."""
        ready = []
        next_check = float("inf")
        send_all = self.flushing > 0 or self.closing
        for tp, queue in self._queues.items():
            if not queue:
                continue
            batch = queue[0]
            next_check = min(next_check, batch.created + self._delivery_timeout)
            if tp in busy:
                continue
            when = self._ready_at(queue, now, send_all)
            if when <= now:
                ready.append(batch)
            else:
                next_check = min(next_check, when)
        return ready, next_check

    def next_ready(self, tp: TopicPartition, now: float) -> float:
        """When the first batch queued for ``tp`` will be ready (``inf``: none is queued)."""
        queue = self._queues.get(tp)
        if not queue:
            return float("inf")
        return self._ready_at(queue, now, self.flushing > 0 or self.closing)

    def _ready_at(self, queue: deque[ProducerBatch], now: float, send_all: bool) -> float:
        """When the first batch of ``queue`` is ready (see the module doc)."""
        batch = queue[0]
        if batch.attempts:
            return batch.retry_at
        if send_all or len(queue) > 1 or batch.memory >= self._batch_size:
            return now
        return batch.created + self._linger

    def take(self, batch: ProducerBatch) -> None:
        """Remove ``batch`` (the first of its partition) to send it."""
        popped = self._queues[batch.tp].popleft()
        assert popped is batch
        self._closed_to_records(batch)

    def _closed_to_records(self, batch: ProducerBatch) -> None:
        """``batch`` leaves its queue (to be sent, failed or dropped): no record joins it."""
        opened = self._open.get(batch.tp.topic)
        if opened is not None and opened.get(batch.tp.partition) is batch:
            del opened[batch.tp.partition]

    def expired(self, now: float) -> list[ProducerBatch]:
        """Take out the queued batches whose delivery timeout has passed: each queue holds
        its batches oldest first (a retried one goes back to the front, and is older), so
        only its front is looked at."""
        created_before = now - self._delivery_timeout
        expired = []
        for queue in self._queues.values():
            while queue and queue[0].created < created_before:
                expired.append(queue.popleft())
                self._closed_to_records(expired[-1])
        return expired

    def next_expiry(self) -> float:
        """When the queued batch that expires first will (``inf``: none is queued)."""
        fronts = (queue[0].created for queue in self._queues.values() if queue)
        return min(fronts, default=float("inf")) + self._delivery_timeout

    def put_back(self, batch: ProducerBatch) -> None:
        """Return a batch to be retried to its partition's queue, before every newer batch
        (batches of a partition are created, and numbered, in order)."""
        queue = self._queues[batch.tp]
        queue.insert(_place(queue, batch), batch)
        self.wakeup.set()

    def split_and_reenqueue(self, batch: ProducerBatch) -> tuple[ProducerBatch, ProducerBatch]:
        """Split ``batch``, refused as too large (see :meth:`ProducerBatch.split`), and queue
        its two parts in its place, before every newer batch of its partition, as Java's
        ``splitAndReenqueue``; the memory it held is theirs. They take no records: they go as
        they are (they were attempted: :meth:`append` opens a new batch after them)."""
        first, second = parts = batch.split(
            compression=self._compression, compression_level=self._compression_level
        )
        queue = self._queues[batch.tp]
        index = _place(queue, batch)
        queue.insert(index, second)
        queue.insert(index, first)
        self._give_back(batch.memory - first.memory - second.memory)  # 0: counted alike
        batch.memory = 0
        self.wakeup.set()
        return parts

    def remove_all(self, partitions: set[TopicPartition] | None = None) -> list[ProducerBatch]:
        """Take every queued batch out, or those of ``partitions`` (to fail or abort them)."""
        taken: list[ProducerBatch] = []
        for (topic, partition), queue in self._queues.items():
            if partitions is None or (topic, partition) in partitions:
                taken += queue
                queue.clear()
                self._open.get(topic, {}).pop(partition, None)
        return taken

    @property
    def empty(self) -> bool:
        return not any(self._queues.values())


def _place(queue: deque[ProducerBatch], batch: ProducerBatch) -> int:
    """Where ``batch`` goes back in its partition's ``queue``: before every batch created
    after it, and after the parts of a split that come before it (see the module doc)."""
    order = (batch.created, batch.split_path)
    index = 0
    while index < len(queue) and (queue[index].created, queue[index].split_path) < order:
        index += 1
    return index
