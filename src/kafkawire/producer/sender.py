"""The producer's background task: drains ready batches into Produce requests, one per leader,
and settles each batch from its partition's answer.

Rules:

- A partition has up to ``max_in_flight_requests_per_connection`` batches in flight, each in
  its own Produce request, written in order on the broker's produce connection (which it
  answers in order). One request carries one batch per partition (Kafka allows no more) and at
  most ``max_request_size`` bytes; a broker has at most that many requests in flight.
- The requests to one broker take turns, in the order they were dispatched: a request's
  batches get their sequence numbers (are built) only once that broker's produce connection is
  open, and it is written (``Cluster.write``) right after, before the next request's turn. A
  request dispatched while the connection was opening, or its metadata refreshing, must not
  overtake older ones: the broker would answer OUT_OF_ORDER_SEQUENCE_NUMBER for their
  sequences (fatal to a transaction), and records would land out of order. For the same
  reason a batch not yet built goes back to its queue when an older batch of its partition
  failed meanwhile (say, its connection could not be opened).
- A retriable error (from the partition's answer, or a lost connection or timeout for the
  whole request) sends the batch back into its partition's queue, in creation order, after a
  backoff, until ``delivery_timeout_ms`` from its creation has passed; a batch still queued
  past that fails with :class:`DeliveryTimeoutError`. Other errors fail the batch at once.
  While a partition's batch waits to be retried, none of its newer batches is sent: once the
  ones in flight are back, the partition starts again from its oldest batch, so records keep
  their order (without idempotence, a newer batch already in flight may still land first, as
  with Kafka's Java client: set the in-flight limit to 1 for strict order there).
- DUPLICATE_SEQUENCE_NUMBER means the broker already has the batch (an earlier attempt got
  through): delivered, offset unknown (-1), as the Java client treats it.
- With idempotence, OUT_OF_ORDER_SEQUENCE_NUMBER on a batch whose older sibling is being
  retried is that sibling's gap: the batch is retried after it. On the oldest batch in flight
  it is a real gap, and like UNKNOWN_PRODUCER_ID it bumps the epoch and retries; a batch that
  fails for good bumps it too (its sequence numbers would leave a gap). No batch is sent while
  a bump is due and batches are still in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict, deque
from typing import Any

from kafkawire.client.produce import produce_request, produce_version
from kafkawire.cluster import Cluster, ClusterMetadata, TopicPartition
from kafkawire.cluster._routing import partition_answer
from kafkawire.errors import (
    DuplicateSequenceNumberError,
    KafkawireError,
    OutOfOrderSequenceNumberError,
    UnknownProducerIdError,
    error_for_code,
)

from .accumulator import RecordAccumulator
from .batch import BatchResult, ProducerBatch
from .errors import DeliveryTimeoutError
from .idempotence import ProducerIdentity
from .settings import ProducerSettings
from .transactions import TransactionManager

__all__ = ["Sender"]

_log = logging.getLogger(__name__)

_PRODUCE = 0
_FIRST_VERSION_WITH_HEADERS = 3  # record batches v2 (headers, idempotence) start at Produce v3
_LAST_VERSION_BEFORE_KIP_890 = 11  # transactions without the broker adding partitions itself
_IDLE = 1.0  # seconds between checks for expired batches when nothing else wakes the loop
_SEQUENCE_ERRORS = (OutOfOrderSequenceNumberError, UnknownProducerIdError)


class Sender:
    """Runs :meth:`run` as a task from the producer's start until :meth:`stop`."""

    def __init__(
        self,
        cluster: Cluster,
        accumulator: RecordAccumulator,
        settings: ProducerSettings,
        identity: ProducerIdentity | None,
        transactions: TransactionManager | None,
    ) -> None:
        self._cluster = cluster
        self._accumulator = accumulator
        self._settings = settings
        self._identity = identity
        self._transactions = transactions
        # Batches in flight per partition, oldest first; partitions whose batch waits to be
        # retried (they send nothing new until their batches in flight are back).
        self._flying: dict[TopicPartition, deque[ProducerBatch]] = defaultdict(deque)
        self._held: set[TopicPartition] = set()
        self._in_flight: dict[int, int] = defaultdict(int)  # requests in flight per broker
        self._turns: dict[int, asyncio.Lock] = defaultdict(asyncio.Lock)  # per broker, FIFO
        self._requests: set[asyncio.Task[None]] = set()
        self._stopping = False

    def stop(self) -> None:
        """Send what is queued at once (lingering no more), then end :meth:`run`."""
        self._stopping = True
        self._accumulator.closing = True
        self._accumulator.wakeup.set()

    async def run(self) -> None:
        accumulator = self._accumulator
        while not (self._stopping and accumulator.empty and not self._requests):
            accumulator.wakeup.clear()
            now = time.monotonic()
            await self._expire(now)
            next_check = now + _IDLE
            if await self._identity_ready():
                ready, when = accumulator.ready(now, self._blocked())
                next_check = min(next_check, when)
                if ready:
                    await self._dispatch(ready)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, next_check - time.monotonic())):
                    await accumulator.wakeup.wait()

    def _blocked(self) -> set[TopicPartition]:
        """Partitions that may not send their next batch now."""
        limit = self._settings.max_in_flight_requests_per_connection
        blocked = {tp for tp, flying in self._flying.items() if len(flying) >= limit}
        self._held = {tp for tp in self._held if self._flying[tp]}  # back: free to go again
        return blocked | self._held

    async def wait_idle(self) -> None:
        """Until no request is in flight."""
        while self._requests:
            await asyncio.wait(list(self._requests))

    # --- dispatching -----------------------------------------------------------------------

    async def _identity_ready(self) -> bool:
        identity = self._identity
        if identity is None or not identity.stale:
            return True
        if self._requests:
            return False  # bump once what is in flight has come back
        try:
            await identity.initialize()
        except KafkawireError as exc:
            if not exc.retriable:
                for batch in self._accumulator.remove_all():
                    await self._fail(batch, exc)
                return False
            _log.warning("could not get a producer id, retrying: %s", exc)
            await asyncio.sleep(self._settings.retry_backoff_ms / 1000)
            return False
        return True

    async def _dispatch(self, ready: list[ProducerBatch]) -> None:
        try:
            metadata = await self._cluster.metadata({b.tp.topic for b in ready})
        except KafkawireError as exc:
            _log.debug("no metadata for ready batches yet: %s", exc)
            self._cluster.mark_metadata_stale()
            return  # they stay queued; retried on the next wake-up, expired in time
        by_leader: dict[int, list[ProducerBatch]] = defaultdict(list)
        for batch in ready:
            try:
                by_leader[metadata.leader_for(*batch.tp)].append(batch)
            except KafkawireError as exc:
                if not exc.retriable:
                    self._accumulator.take(batch)
                    await self._fail(batch, exc)
                else:
                    self._cluster.mark_metadata_stale()
        limit = self._settings.max_in_flight_requests_per_connection
        for node, batches in by_leader.items():
            if self._in_flight[node] >= limit:
                continue
            chosen = self._fill_request(batches)
            if self._transactions is not None:
                # Before the task starts: requests must reach the broker in the order their
                # sequence numbers are given, so nothing may suspend between the two.
                try:
                    await self._transactions.add_partitions({b.tp for b in chosen})
                except KafkawireError as exc:
                    for batch in chosen:
                        self._accumulator.take(batch)
                        await self._fail(batch, exc)
                    continue
            for batch in chosen:
                self._accumulator.take(batch)
                self._flying[batch.tp].append(batch)
            self._in_flight[node] += 1
            task = asyncio.create_task(
                self._send(node, chosen, metadata), name=f"kafkawire-produce {node}"
            )
            self._requests.add(task)
            task.add_done_callback(self._requests.discard)

    def _fill_request(self, batches: list[ProducerBatch]) -> list[ProducerBatch]:
        """As many batches as fit in ``max_request_size`` (at least one)."""
        chosen: list[ProducerBatch] = []
        size = 0
        for batch in batches:
            estimate = batch.builder.estimated_size
            if chosen and size + estimate > self._settings.max_request_size:
                break
            chosen.append(batch)
            size += estimate
        return chosen

    # --- one request -----------------------------------------------------------------------

    async def _send(
        self, node: int, batches: list[ProducerBatch], metadata: ClusterMetadata
    ) -> None:
        sending = batches
        try:
            async with self._turns[node]:  # taken in dispatch order: tasks start in that order
                connection = await self._cluster.connection(node, "produce")
                sending = self._not_overtaking(batches)
                if not sending:
                    return
                pending = self._cluster.write(
                    self._request(node, connection.version_for(_PRODUCE), sending, metadata),
                    node_id=node,
                )
            response = await pending
        except KafkawireError as exc:
            for batch in sending:
                await self._failed_attempt(batch, exc)
        else:
            for batch in sending:
                await self._settle(batch, response, metadata)
        finally:
            self._in_flight[node] -= 1
            for batch in batches:
                self._flying[batch.tp].remove(batch)
            # Out of the set before the loop wakes: it ends once no request is left.
            self._requests.discard(asyncio.current_task())
            self._accumulator.wakeup.set()

    def _not_overtaking(self, batches: list[ProducerBatch]) -> list[ProducerBatch]:
        """The batches that may be built and sent now. One whose partition has an older batch
        waiting to be retried (it failed after this one was dispatched, before or after it
        was built) goes back to its queue, behind that batch, without a sequence number."""
        going = []
        for batch in batches:
            if batch.tp in self._held and batch.producer_state is None:
                self._accumulator.put_back(batch)
            else:
                going.append(batch)
        return going

    def _request(
        self, node: int, served: int, batches: list[ProducerBatch], metadata: ClusterMetadata
    ) -> Any:
        """The Produce request of ``batches``, built now: their sequence numbers are given."""
        settings = self._settings
        transactional = self._transactions is not None
        topic_ids = {b.tp.topic: metadata.topics[b.tp.topic].topic_id for b in batches}
        version = produce_version(served, list(topic_ids.values()))
        if transactional:
            version = min(version, _LAST_VERSION_BEFORE_KIP_890)
        if version < _FIRST_VERSION_WITH_HEADERS:
            raise KafkawireError(
                f"broker {node} serves Produce up to v{version}; the producer needs v3 "
                "(record batches) or newer"
            )
        data: dict[str, list[tuple[int, bytes]]] = defaultdict(list)
        for batch in batches:
            state = None if self._identity is None else self._identity.state_for(batch)
            data[batch.tp.topic].append(
                (batch.tp.partition, batch.build(state, transactional=transactional))
            )
            batch.attempts += 1
        return produce_request(
            version,
            data,
            topic_ids=topic_ids,
            acks=settings.acks,
            timeout_ms=settings.request_timeout_ms,
            transactional_id=settings.transactional_id,
        )

    async def _settle(self, batch: ProducerBatch, response: Any, metadata: ClusterMetadata) -> None:
        """Complete, retry or fail ``batch`` by its partition's part of ``response``."""
        if self._settings.acks == 0:  # nothing comes back: the response is empty
            await self._complete(batch, BatchResult(-1, -1))
            return
        topic_id = metadata.topics[batch.tp.topic].topic_id
        naming = topic_id if response.__version__ > 12 and topic_id else batch.tp.topic
        try:
            answer = partition_answer(response, naming, batch.tp.partition)
        except KafkawireError as exc:
            await self._failed_attempt(batch, exc)
            return
        error = error_for_code(answer.error_code, getattr(answer, "error_message", None))
        if error is None:
            result = BatchResult(int(answer.base_offset), getattr(answer, "log_append_time_ms", -1))
            await self._complete(batch, result)
        elif isinstance(error, DuplicateSequenceNumberError):
            await self._complete(batch, BatchResult(-1, -1))
        else:
            await self._failed_attempt(batch, error)

    async def _failed_attempt(self, batch: ProducerBatch, error: KafkawireError) -> None:
        identity = self._identity
        retriable = error.retriable
        if isinstance(error, OutOfOrderSequenceNumberError) and batch.tp in self._held:
            retriable = True  # an older batch of this partition is being retried: its gap
        elif (
            isinstance(error, _SEQUENCE_ERRORS)
            and identity is not None
            and self._transactions is None
        ):
            identity.need_new_epoch(f"{batch.tp}: {error}")
            retriable = True
        age = time.monotonic() - batch.created
        if not retriable or age * 1000 >= self._settings.delivery_timeout_ms:
            await self._fail(batch, error if not retriable else self._expired(batch, error))
            return
        if getattr(error, "invalid_metadata", False) or not isinstance(error, _SEQUENCE_ERRORS):
            self._cluster.mark_metadata_stale()
        delay = min(
            self._settings.retry_backoff_ms * 2 ** (batch.attempts - 1),
            max(self._settings.retry_backoff_max_ms, self._settings.retry_backoff_ms),
        )
        batch.retry_at = time.monotonic() + delay / 1000
        _log.debug("retrying a batch of %d records to %s: %s", len(batch), batch.tp, error)
        self._held.add(batch.tp)
        self._accumulator.put_back(batch)

    def _expired(self, batch: ProducerBatch, error: BaseException | None) -> DeliveryTimeoutError:
        reason = f"; last error: {error}" if error is not None else ""
        expired = DeliveryTimeoutError(
            f"{len(batch)} records for {batch.tp.topic}/{batch.tp.partition} expired: "
            f"{self._settings.delivery_timeout_ms} ms passed since the batch was created{reason}"
        )
        expired.__cause__ = error
        return expired

    async def _expire(self, now: float) -> None:
        """Fail queued batches whose delivery timeout has passed."""
        for batch in self._accumulator.expired(now - self._settings.delivery_timeout_ms / 1000):
            await self._fail(batch, self._expired(batch, None))

    async def _complete(self, batch: ProducerBatch, result: BatchResult) -> None:
        batch.complete(result)
        await self._accumulator.release(batch)

    async def _fail(self, batch: ProducerBatch, error: BaseException) -> None:
        _log.warning("%d records for %s failed: %s", len(batch), batch.tp, error)
        sent = batch.producer_state is not None
        if sent and self._identity is not None and self._transactions is None:
            self._identity.need_new_epoch(f"a batch for {batch.tp} failed for good")
        if self._transactions is not None:
            self._transactions.failed(error)
        batch.fail(error)
        await self._accumulator.release(batch)
