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
- The common case takes no task: with the connection open and no older request of that
  broker waiting for its turn, the loop builds and writes the request as it dispatches it,
  and the cluster hands the answer to a callback that settles its batches (a task, a lock
  and a timeout scope per request cost more than the rest of the request's way). Otherwise
  a task waits for the turn and the connection, then writes the same way. The callback runs
  the settling under the supervisor's rule: an error it does not handle ends the producer,
  as a request task's would. Once the loop has ended (the producer closed or failed), a late
  answer only frees its request's place.
- A retriable error (from the partition's answer, or a lost connection or timeout for the
  whole request) sends the batch back into its partition's queue, in creation order, after a
  backoff. Other errors fail the batch at once.
- ``delivery_timeout_ms`` from its creation, a batch fails with :class:`DeliveryTimeoutError`,
  queued or in flight (as Java's sender expires both; the answer to a request in flight is
  then ignored, though the broker may have written the batch). The loop wakes for the next
  expiry, and it never waits on the cluster itself: metadata refreshes, producer ids and
  AddPartitionsToTxn run as tasks of their own (one of each at a time), while batches that
  need them wait in their queues and expire on time.
  While a partition's batch waits to be retried, none of its newer batches is sent: once the
  ones in flight are back, the partition starts again from its oldest batch, so records keep
  their order (without idempotence, a newer batch already in flight may still land first, as
  with Kafka's Java client: set the in-flight limit to 1 for strict order there). A batch
  sent again goes alone: the partition's newer batches follow once it is answered. Java's
  sender lets a new batch follow at once; but a broker that refuses the resent batch again
  and takes the newer one (a new leader with no state for the producer id takes any
  sequence) leaves a gap no retry can fill, and the resent batch would be retried until its
  delivery timeout. That costs nothing while nothing fails.
- DUPLICATE_SEQUENCE_NUMBER means the broker already has the batch (an earlier attempt got
  through): delivered, offset unknown (-1), as the Java client treats it.
- MESSAGE_TOO_LARGE on a batch of several records (larger than the topic's
  ``max.message.bytes``: ``batch_size`` above it, or compression that grew the batch) splits
  it in two, queued in its place, as Java's ``Sender.completeBatch`` splits a v2 batch
  (``RecordAccumulator.splitAndReenqueue``); each part is split again if refused again. The
  parts take its sequences (no gap: the broker has none of it), go once the partition's
  batches in flight are back, and go one at a time, as a batch sent again does. Java splits
  first at ``batch.size``, which only undoes its compression-ratio estimate; kafkawire fills
  batches by their uncompressed size, so that would give the same batch back, and it halves
  at once, as Java does a batch already split (KAFKA-8350). A record alone fails with
  :class:`~kafkawire.errors.MessageTooLargeError` naming its partition and size.
- With idempotence, the sequence state (:mod:`.sequences`) gives each batch its sequences
  when it is built and hears how it ended. OUT_OF_ORDER_SEQUENCE_NUMBER on a batch after the
  next one to the last acknowledged is an older batch's gap: the batch is retried after it.
  On the next one, or one behind the last acknowledged, it is a real gap, and it bumps the
  epoch and retries; a batch that fails for good after it was sent bumps it too (the broker
  may or may not have it).
  UNKNOWN_PRODUCER_ID (the broker lost the id's state) takes a new producer id.
  A partition's first batch under an id and epoch goes alone, until it is acknowledged: a
  broker with no state for the id takes any first sequence, so the batches behind a first
  one it refused for a while (no leader, too few replicas, too large to take whole) would
  land before it, and it could then never follow them (Java's sender lets them go, and
  retries that batch until its delivery timeout). Should that happen anyway, its
  OUT_OF_ORDER_SEQUENCE_NUMBER is a real gap (behind the last acknowledged sequence): the
  epoch is bumped and it goes again, after them. No batch is built while a change is due;
  it is made once the batches in flight are back.
  InitProducerId is retried with backoff on retriable errors; any other error ends the
  producer, as Java's sender treats it as fatal. A transactional producer's batch failing
  that way fails (its transaction must be aborted, and the epoch is bumped after the abort).
- The sender and every task it starts (a request, a metadata refresh, InitProducerId,
  AddPartitionsToTxn) run under the producer's :class:`~kafkawire.cluster.supervisor.Supervisor`:
  an error none of them handles reaches the producer, which fails every delivery with it and
  cancels them all.
- Metrics (:mod:`.metrics`) are recorded per batch as it is built and sent, failed or retried,
  and per request as it is answered; never per record.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections import defaultdict, deque
from typing import Any

from kafkawire.cluster import Cluster, ClusterMetadata, TopicPartition
from kafkawire.cluster._routing import partition_answer
from kafkawire.cluster.supervisor import Supervisor, Work
from kafkawire.errors import (
    DuplicateSequenceNumberError,
    KafkawireError,
    MessageTooLargeError,
    OutOfOrderSequenceNumberError,
    UnknownProducerIdError,
    error_for_code,
)
from kafkawire.net import Connection
from kafkawire.operations.fanout import by_leader
from kafkawire.operations.produce_request import PRODUCE, produce_request, produce_version

from .accumulator import RecordAccumulator
from .batch import ProducerBatch
from .errors import DeliveryTimeoutError
from .idempotence import ProducerIdentity
from .metrics import ProducerMetrics
from .settings import ProducerSettings
from .throttled_log import ThrottledLog
from .transactions import TransactionManager

__all__ = ["Sender"]

_log = logging.getLogger(__name__)

_FIRST_VERSION_WITH_HEADERS = 3  # record batches v2 (headers, idempotence) start at Produce v3
_LAST_VERSION_BEFORE_KIP_890 = 11  # transactions without the broker adding partitions itself
_IDLE = 1.0  # seconds between checks when nothing else wakes the loop
_SEQUENCE_ERRORS = (OutOfOrderSequenceNumberError, UnknownProducerIdError)
_REFRESH = "metadata refresh"


def _name(tp: TopicPartition) -> str:
    return f"{tp.topic}/{tp.partition}"


def _partition_of(batch: ProducerBatch) -> TopicPartition:
    return batch.tp


def _answer_for(response: Any, naming: str | uuid.UUID, partition: int) -> Any:
    """The part of a Produce response that answers ``partition`` of the topic ``naming``
    (its name, or its id from v13), found by Produce's own field names, which every version
    has; else :func:`partition_answer`'s error, which says what the broker answered."""
    field = "topic_id" if isinstance(naming, uuid.UUID) else "name"
    for topic in response.responses:
        if getattr(topic, field, None) == naming:
            for answer in topic.partition_responses:
                if answer.index == partition:
                    return answer
    return partition_answer(response, naming, partition)


class _Alarm:
    """Sets ``wakeup`` at the latest by a time (``time.monotonic()``), with one timer for
    many loop turns: the sender's loop turns once or twice per batch, and its next check is
    mostly a second away, so a timer that rings sooner than asked is kept (the loop only
    turns once more) rather than replaced at each turn."""

    __slots__ = ("_timer", "_wakeup", "_when")

    def __init__(self, wakeup: asyncio.Event) -> None:
        self._wakeup = wakeup
        self._timer: asyncio.TimerHandle | None = None
        self._when = float("inf")

    def ring_by(self, when: float) -> None:
        if self._timer is not None and self._when <= when:
            return
        self.cancel()
        if when != float("inf"):
            self._when = when
            delay = max(0.0, when - time.monotonic())
            self._timer = asyncio.get_running_loop().call_later(delay, self._ring)

    def _ring(self) -> None:
        self._timer = None
        self._wakeup.set()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class Sender:
    """Runs :meth:`run` as a task from the producer's start until :meth:`stop`."""

    def __init__(
        self,
        cluster: Cluster,
        accumulator: RecordAccumulator,
        settings: ProducerSettings,
        identity: ProducerIdentity | None,
        transactions: TransactionManager | None,
        *,
        supervisor: Supervisor,
        metrics: ProducerMetrics,
    ) -> None:
        self._cluster = cluster
        self._metrics = metrics
        self._compressed = settings.compression_type != "none"
        self._supervisor = supervisor
        self._accumulator = accumulator
        self._settings = settings
        self._identity = identity
        self._sequences = None if identity is None else identity.sequences
        self._transactions = transactions
        self._delivery_timeout = settings.delivery_timeout_ms / 1000
        # Batches in flight per partition, oldest first; partitions whose batch waits to be
        # retried (they send nothing new until their batches in flight are back).
        self._flying: dict[TopicPartition, deque[ProducerBatch]] = defaultdict(deque)
        self._held: set[TopicPartition] = set()
        self._resending: set[TopicPartition] = set()  # a batch sent again is in flight
        self._first_out: set[TopicPartition] = set()  # a first batch under the id is in flight
        self._in_flight: dict[int, int] = defaultdict(int)  # requests in flight per broker
        self._outstanding = 0  # requests dispatched and not ended, to every broker
        self._idle = asyncio.Event()  # set while none is
        self._idle.set()
        self._turns: dict[int, asyncio.Lock] = defaultdict(asyncio.Lock)  # per broker, FIFO
        self._waiting: dict[int, int] = defaultdict(int)  # requests waiting for their turn
        self._ended = False  # the loop ended: answers coming later settle nothing
        self._expiry_due = 0.0  # no batch expires before this (see _expire)
        self._chores: dict[str, asyncio.Task[None]] = {}  # by kind: at most one of each
        # The metadata found stale (a refresh is due while it is the cluster's current one),
        # and when the next refresh may start (refreshes back off).
        self._stale: ClusterMetadata | None = None
        self._refresh_after = 0.0
        self._refresh_failures = 0
        self._warnings = ThrottledLog(_log)
        self._stopping = False
        self._corked: list[Connection] | None = None  # during a turn: connections written to

    def stop(self) -> None:
        """Send what is queued at once (lingering no more), then end :meth:`run`."""
        self._stopping = True
        self._accumulator.closing = True
        self._accumulator.wakeup.set()

    async def run(self) -> None:
        """The sender's loop; the tasks it started are the supervisor's to end."""
        accumulator = self._accumulator
        alarm = _Alarm(accumulator.wakeup)
        try:
            while not (self._stopping and accumulator.empty and not self._outstanding):
                accumulator.wakeup.clear()
                now = time.monotonic()
                if now >= self._expiry_due:
                    self._expiry_due = self._expire(now)
                alarm.ring_by(min(now + _IDLE, self._expiry_due, self._turn(now)))
                await accumulator.wakeup.wait()
        finally:
            self._ended = True
            alarm.cancel()

    def _turn(self, now: float) -> float:
        """Dispatch what is ready, and again while that leaves batches ready (the batch
        behind one sent, batches that did not fit in a request), at most
        ``max_in_flight_requests_per_connection`` times; when to look again. The requests of
        a turn go out in one socket write per connection (:meth:`Connection.cork`), which
        wakes the broker once."""
        accumulator = self._accumulator
        self._corked = []
        try:
            for _ in range(self._settings.max_in_flight_requests_per_connection):
                ready, when = accumulator.ready(now, self._blocked())
                if not (ready and self._identity_ready()):
                    return when
                next_check = self._dispatch(ready, now)
                if next_check > now:
                    return min(when, next_check)
            return now  # more may be ready: the next turn, at once
        finally:
            corked, self._corked = self._corked, None
            for connection in corked:
                connection.uncork()

    def _blocked(self) -> set[TopicPartition]:
        """Partitions that may not send their next batch now."""
        limit = self._settings.max_in_flight_requests_per_connection
        blocked = {tp for tp, flying in self._flying.items() if len(flying) >= limit}
        sequences = self._sequences
        if sequences is not None:
            # A partition's first batch under a producer id goes alone: see the module doc.
            self._first_out = {
                tp for tp, flying in self._flying.items() if flying and sequences.last_acked(tp) < 0
            }
            blocked |= self._first_out
        self._held = {tp for tp in self._held if self._flying[tp]}  # back: free to go again
        return blocked | self._held | self._resending

    @property
    def requests_in_flight(self) -> int:
        """Produce requests sent and not answered yet."""
        return self._outstanding

    async def wait_idle(self) -> None:
        """Until no request is in flight."""
        await self._idle.wait()

    # --- the sender's tasks -------------------------------------------------------------------

    def _start(self, name: str, work: Work) -> None:
        """Run ``work()`` as the one task of its kind, unless one is running; the loop
        wakes when it ends."""
        if name in self._chores:
            return
        task = self._supervisor.spawn(name, work)
        self._chores[name] = task

        def ended(_: object) -> None:
            self._chores.pop(name, None)
            self._accumulator.wakeup.set()

        task.add_done_callback(ended)

    def _backoff(self, attempts: int) -> float:
        """Seconds to wait after the ``attempts``-th failure in a row: ``retry_backoff_ms``
        doubling up to ``retry_backoff_max_ms``, with jitter (Java's ExponentialBackoff)."""
        return self._cluster.settings.backoff.after(attempts)

    # --- producer id --------------------------------------------------------------------------

    def _identity_ready(self) -> bool:
        sequences = self._sequences
        if sequences is None or sequences.sendable:
            return True
        if not sequences.in_flight():  # bump once what is in flight has come back
            self._start("InitProducerId", self._renew_identity)
        return False

    async def _renew_identity(self) -> None:
        """InitProducerId until it succeeds; an error that is not retriable ends the producer."""
        identity = self._identity
        assert identity is not None
        failures = 0
        while True:
            try:
                await identity.initialize()
            except KafkawireError as exc:
                if not exc.retriable:
                    raise
                failures += 1
                delay = self._backoff(failures)
                self._warnings.warning(
                    "producer id",
                    "no producer id yet (%d attempts), records wait; retrying in %.3g s: %s",
                    failures,
                    delay,
                    exc,
                )
                await asyncio.sleep(delay)
            else:
                return

    # --- metadata ------------------------------------------------------------------------------

    def _metadata(self, topics: set[str], now: float) -> ClusterMetadata | None:
        """The metadata to route ``topics`` by, or ``None`` while a refresh it needs runs."""
        current = self._cluster.current_metadata
        if (
            current is not None
            and current is not self._stale
            and current.age() * 1000 < self._settings.metadata_max_age_ms
            and all(topic in current.topics for topic in topics)
        ):
            return current
        if now >= self._refresh_after:
            self._start(_REFRESH, lambda: self._refresh(topics))
        return None

    def _mark_stale(self) -> None:
        self._stale = self._cluster.current_metadata
        self._cluster.mark_metadata_stale()

    async def _refresh(self, topics: set[str]) -> None:
        try:
            await self._cluster.metadata(topics)
        except KafkawireError as exc:
            self._refresh_failures += 1
            delay = self._backoff(self._refresh_failures)
            self._warnings.warning(
                "metadata",
                "no metadata for %s yet, records wait; retrying in %.3g s: %s",
                ", ".join(sorted(topics)),
                delay,
                exc,
            )
        else:
            self._refresh_failures = 0
            delay = self._backoff(1)
        self._refresh_after = time.monotonic() + delay

    # --- dispatching -----------------------------------------------------------------------

    def _dispatch(self, ready: list[ProducerBatch], now: float) -> float:
        """Send what can go now; when to look again for what had to wait (``inf``: when
        woken). Nothing here waits: the queues stay as :meth:`ready` saw them.

        What goes at a later turn is accounted for here (the loop is not woken as each
        request ends): the batch behind one sent (one batch per partition goes at a turn),
        and ready batches that did not fit in their broker's request; a broker or partition
        at its limit of requests in flight is woken for by the request that frees it."""
        metadata = self._metadata({b.tp.topic for b in ready}, now)
        if metadata is None:  # look again when the refresh ends (it wakes the loop) or may start
            return float("inf") if _REFRESH in self._chores else self._refresh_after
        split = by_leader(metadata, self._in_transaction(ready), _partition_of)
        next_check = float("inf")
        for batch, exc in split.unrouted:
            if not exc.retriable:
                self._accumulator.take(batch)
                self._fail(batch, exc)
            else:
                self._warnings.warning(
                    "leader", "records for %s wait for a leader: %s", _name(batch.tp), exc
                )
                self._mark_stale()
                next_check = now  # at once: the next turn starts the refresh
        limit = self._settings.max_in_flight_requests_per_connection
        accumulator = self._accumulator
        for node, batches in split.shares.items():
            if self._in_flight[node] >= limit:
                continue
            chosen = self._fill_request(batches)
            if len(chosen) < len(batches):
                next_check = now  # the others go in the next request
            for batch in chosen:
                accumulator.take(batch)
                flying = self._flying[batch.tp]
                flying.append(batch)
                if len(flying) < limit:
                    next_check = min(next_check, accumulator.next_ready(batch.tp, now))
            self._in_flight[node] += 1
            self._outstanding += 1
            self._idle.clear()
            connection = (
                None if self._waiting[node] else self._cluster.ready_connection(node, "produce")
            )
            if connection is not None:
                self._write(node, chosen, metadata, connection)
            else:
                self._waiting[node] += 1
                self._supervisor.spawn(
                    f"Produce to broker {node}",
                    functools.partial(self._send, node, chosen, metadata),
                )
        return next_check

    def _in_transaction(self, ready: list[ProducerBatch]) -> list[ProducerBatch]:
        """The batches whose partitions are in the transaction (all, without one); the
        others wait while AddPartitionsToTxn adds theirs."""
        transactions = self._transactions
        if transactions is None:
            return ready
        missing = transactions.not_added({b.tp for b in ready})
        if not missing:
            return ready
        # Bounded by the batches it is for: past their delivery timeout they are gone.
        deadline = min(b.created for b in ready if b.tp in missing) + self._delivery_timeout
        self._start("AddPartitionsToTxn", lambda: self._add_partitions(missing, deadline))
        return [b for b in ready if b.tp not in missing]

    async def _add_partitions(self, partitions: set[TopicPartition], deadline: float) -> None:
        assert self._transactions is not None
        try:
            await self._transactions.add_partitions(partitions, deadline)
        except KafkawireError as exc:
            for batch in self._accumulator.remove_all(partitions):
                self._fail(batch, exc)

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
        """Wait for ``node``'s turn and produce connection, then write (see the module doc)."""
        written = False
        try:
            async with self._turns[node]:  # taken in dispatch order: tasks start in that order
                try:
                    connection = await self._cluster.connection(node, "produce")
                except KafkawireError as exc:
                    for batch in batches:
                        self._failed_attempt(batch, exc)
                    return
                written = True  # or ended: either way, its place is freed by _write
                self._write(node, batches, metadata, connection)
        finally:
            self._waiting[node] -= 1
            if not written:
                self._request_ended(node, batches)

    def _write(
        self,
        node: int,
        batches: list[ProducerBatch],
        metadata: ClusterMetadata,
        connection: Connection,
    ) -> None:
        """Build the request of ``batches`` (those that may go now) and write it on
        ``connection``; its answer settles them in :meth:`_answered`."""
        sending = batches
        try:
            sending = self._not_overtaking(batches)
            if not sending:
                self._request_ended(node, batches)
                return
            request = self._request(node, connection.version_for(PRODUCE), sending, metadata)
            if self._corked is not None and connection not in self._corked:
                connection.cork()  # written at the end of the turn, with its other requests
                self._corked.append(connection)
            self._cluster.write(
                request,
                node_id=node,
                on_answer=functools.partial(
                    self._answered, node, batches, sending, metadata, time.monotonic()
                ),
            )
        except KafkawireError as exc:
            for batch in sending:
                self._failed_attempt(batch, exc)
            self._request_ended(node, batches)

    def _answered(  # noqa: PLR0917 - bound by functools.partial, once per request
        self,
        node: int,
        batches: list[ProducerBatch],
        sending: list[ProducerBatch],
        metadata: ClusterMetadata,
        sent: float,
        response: Any,
        error: BaseException | None,
    ) -> None:
        """Settle the batches of a request from its answer (``error``: how it failed)."""
        try:
            if self._ended:
                return  # the producer closed or failed: its batches are settled already
            if error is None:
                self._metrics.request_answered(
                    sum(len(b) for b in sending),
                    (time.monotonic() - sent) * 1000,
                    getattr(response, "throttle_time_ms", 0),
                )
                for batch in sending:
                    self._settle(batch, response, metadata)
            elif isinstance(error, KafkawireError):
                for batch in sending:
                    self._failed_attempt(batch, error)
            else:
                raise error
        except Exception as exc:  # not handled here: it ends the producer
            self._supervisor.report(f"Produce to broker {node}", exc)
        finally:
            self._request_ended(node, batches)

    def _request_ended(self, node: int, batches: list[ProducerBatch]) -> None:
        """Free the place of a request (answered, failed or not sent), and wake the loop if
        that lets something go: the broker or a partition was at its limit of requests in
        flight, a partition waits for its batches in flight to retry from its oldest or for
        a batch sent again, the producer id waits to change, or the producer to close.
        Otherwise the loop has nothing to do before the time it set its alarm for, or a new
        batch wakes it."""
        limit = self._settings.max_in_flight_requests_per_connection
        wake = self._stopping or self._in_flight[node] >= limit
        self._in_flight[node] -= 1
        accumulator = self._accumulator
        for batch in batches:
            tp = batch.tp
            flying = self._flying[tp]
            wake = wake or len(flying) >= limit or tp in self._held or tp in self._first_out
            if batch.attempts > 1 and tp in self._resending:
                self._resending.discard(tp)
                wake = True
            flying.remove(batch)
        self._outstanding -= 1
        if not self._outstanding:
            self._idle.set()
        if wake or (self._sequences is not None and not self._sequences.sendable):
            accumulator.wakeup.set()

    def _not_overtaking(self, batches: list[ProducerBatch]) -> list[ProducerBatch]:
        """The batches that may be built and sent now. One whose partition has an older batch
        waiting to be retried (it failed after this one was dispatched, before or after it
        was built) goes back to its queue, behind that batch, without a sequence number; all
        go back while the producer id is to change (they are built under the new one)."""
        if self._sequences is not None and not self._sequences.sendable:
            for batch in batches:
                self._accumulator.put_back(batch)
            return []
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
        sequences = self._sequences
        now = time.monotonic()
        for batch in batches:
            state = None if sequences is None else sequences.assign(batch)
            payload = batch.build(state, transactional=transactional)
            data[batch.tp.topic].append((batch.tp.partition, payload))
            batch.attempts += 1
            if batch.attempts > 1:
                self._resending.add(batch.tp)
            size = len(payload)
            ratio = size / batch.memory if self._compressed and batch.memory else 1.0
            self._metrics.batch_sent(len(batch), size, ratio, (now - batch.created) * 1000)
        return produce_request(
            version,
            data,
            topic_ids=topic_ids,
            acks=settings.acks,
            timeout_ms=settings.request_timeout_ms,
            transactional_id=settings.transactional_id,
        )

    def _settle(self, batch: ProducerBatch, response: Any, metadata: ClusterMetadata) -> None:
        """Complete, retry or fail ``batch`` by its partition's part of ``response``."""
        if self._settings.acks == 0:  # nothing comes back: the response is empty
            self._complete(batch, -1, -1)
            return
        topic_id = metadata.topics[batch.tp.topic].topic_id
        naming = topic_id if response.__version__ > 12 and topic_id else batch.tp.topic
        try:
            answer = _answer_for(response, naming, batch.tp.partition)
        except KafkawireError as exc:
            self._failed_attempt(batch, exc)
            return
        error = error_for_code(answer.error_code, getattr(answer, "error_message", None))
        if error is None:
            self._complete(
                batch, int(answer.base_offset), getattr(answer, "log_append_time_ms", -1)
            )
        elif isinstance(error, DuplicateSequenceNumberError):
            self._complete(batch, -1, -1)
        elif isinstance(error, MessageTooLargeError):
            self._too_large(batch, error)
        else:
            self._failed_attempt(batch, error)

    def _too_large(self, batch: ProducerBatch, error: MessageTooLargeError) -> None:
        """Split a batch of several records the broker refused as too large, and send its
        parts (see the module doc); a record alone fails, naming its size."""
        if batch.future.done():
            return  # expired in flight, or failed with the producer
        size = len(batch.payload or b"")
        if len(batch) == 1:
            alone = MessageTooLargeError(
                f"{_name(batch.tp)}: a batch of 1 record, {size} bytes, is larger than the "
                "broker takes for the topic (max.message.bytes): "
                f"{error.message or error.description}"
            )
            self._failed_attempt(batch, alone)
            return
        batch.last_error = error
        parts = self._accumulator.split_and_reenqueue(batch)
        if self._sequences is not None:
            self._sequences.split(batch, parts)
        self._held.add(batch.tp)  # its parts go once the batches in flight after it are back
        self._metrics.batch_split()
        self._warnings.warning(
            "split",
            "%d records for %s (%d bytes) refused as too large: sending them again in "
            "batches of %d and %d records: %s",
            len(batch),
            _name(batch.tp),
            size,
            len(parts[0]),
            len(parts[1]),
            error,
        )

    def _failed_attempt(self, batch: ProducerBatch, error: KafkawireError) -> None:
        if batch.future.done():
            return  # expired in flight, or failed with the producer: nothing to retry
        sequences = self._sequences
        retriable = error.retriable
        if sequences is not None and isinstance(error, _SEQUENCE_ERRORS):
            if isinstance(error, OutOfOrderSequenceNumberError) and not sequences.gap_is_real(
                batch
            ):
                retriable = True  # an older batch of this partition is not in yet: its gap
            elif self._transactions is None:
                if isinstance(error, UnknownProducerIdError):
                    sequences.request_new_id(f"{_name(batch.tp)}: {error}")
                else:
                    sequences.request_epoch_bump(f"{_name(batch.tp)}: {error}")
                retriable = True
        if sequences is not None:
            sequences.returned(batch)
        if not retriable:
            self._fail(batch, error)
            return
        batch.last_error = error
        if getattr(error, "invalid_metadata", False) or not isinstance(error, _SEQUENCE_ERRORS):
            self._mark_stale()
        delay = self._backoff(batch.attempts)
        batch.retry_at = time.monotonic() + delay
        self._warnings.warning(
            "retry",
            "retrying %d records for %s in %.3g s (attempt %d failed): %s",
            len(batch),
            _name(batch.tp),
            delay,
            batch.attempts,
            error,
        )
        self._held.add(batch.tp)
        self._metrics.batch_retried(len(batch))
        self._accumulator.put_back(batch)

    def _expire(self, now: float) -> float:
        """Fail the batches whose delivery timeout has passed, queued or in flight; when the
        next one may expire. No batch can sooner: those here expire no sooner, and one
        created later expires later than ``now`` plus the delivery timeout (so the loop
        looks again only then, not at every turn)."""
        next_expiry = now + self._delivery_timeout
        for batch in self._accumulator.expired(now):
            self._fail(batch, self._expired(batch, in_flight=False))
        next_expiry = min(next_expiry, self._accumulator.next_expiry())
        for flying in self._flying.values():
            for batch in flying:
                if batch.future.done():
                    continue
                expires = batch.created + self._delivery_timeout
                if expires <= now:
                    self._fail(batch, self._expired(batch, in_flight=True))
                else:
                    next_expiry = min(next_expiry, expires)
        return next_expiry

    def _expired(self, batch: ProducerBatch, *, in_flight: bool) -> DeliveryTimeoutError:
        if in_flight:
            where = "in flight, no answer yet"
        else:
            where = f"queued after {batch.attempts} attempts" if batch.attempts else "not sent"
        last = batch.last_error
        expired = DeliveryTimeoutError(
            f"{len(batch)} records for {_name(batch.tp)} expired ({where}): "
            f"{self._settings.delivery_timeout_ms} ms (delivery_timeout_ms) passed since the "
            "batch was created" + (f"; last error: {last}" if last is not None else "")
        )
        expired.__cause__ = last
        return expired

    def _complete(self, batch: ProducerBatch, base_offset: int, log_append_time: int) -> None:
        if self._sequences is not None:
            self._sequences.acked(batch)
        batch.complete(base_offset, log_append_time)
        self._accumulator.release(batch)

    def _fail(self, batch: ProducerBatch, error: BaseException) -> None:
        if batch.future.done():
            return
        self._warnings.warning(
            f"failed: {type(error).__name__}",
            "%d records for %s failed: %s",
            len(batch),
            _name(batch.tp),
            error,
        )
        self._metrics.batch_failed(len(batch))
        self.discard(batch, error)

    def discard(self, batch: ProducerBatch, error: BaseException) -> None:
        """Fail ``batch`` (failed for good, expired or aborted) and free what it held."""
        if self._sequences is not None:
            self._sequences.failed(batch, f"a batch for {_name(batch.tp)} failed for good")
        if self._transactions is not None:
            self._transactions.failed(error)
        batch.fail(error)
        self._accumulator.release(batch)
