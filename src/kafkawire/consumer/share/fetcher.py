"""The share fetcher: one lane per partition leader, carrying ShareFetch and ShareAcknowledge
requests in its share session, and the buffer of what they acquired.

Rules this module keeps (the session's own are :mod:`.session`'s, what is held
:mod:`.holdings`'):

- One request at a time per broker (a session's epochs are a sequence); brokers in parallel.
  ShareFetch goes on the broker's fetch connection, so a long poll holds up nothing else.
- A leader is fetched when the member has partitions it leads and nothing acquired from it is
  still buffered (a lock starts when a record is acquired, so no more is taken than the
  application has asked for plus one fetch ahead; with ``share_acquire_mode="record_limit"``
  not even that: only while a ``getmany`` waits). Acknowledgements queued for a partition it
  fetches ride that ShareFetch; the rest (partitions no longer fetched there, RENEWs, or when
  no fetch is due) go in a ShareAcknowledge at once. Acknowledgements never wait longer than
  the request in flight to their broker.
- A partition is fetched from its leader in the metadata now. When the leader moves, the old
  leader's session forgets it on the next request there, the new leader is fetched at once,
  records buffered from the old leader are dropped (that delivery ended with its leadership:
  the new leader delivers them again), and acknowledgements of records from the old leader
  still go to it, whose answer settles them: nothing waits on the old leader (franz-go
  1.21.4 stranded such records).
- An answer that names a partition's new leader (NOT_LEADER_OR_FOLLOWER or
  FENCED_LEADER_EPOCH with the current leader and its node endpoint, KIP-951) moves the
  partition there in the metadata (:mod:`.leader_hints`), and it is fetched there at once,
  without a refresh (Java's ``updatePartitionLeadership``).
- Any other partition error that says the metadata is stale (a moved leader, an unknown topic
  id) refreshes it and backs the partition off for ``retry_backoff_ms``; other partition errors
  reach the application's next poll. A session that ends (:mod:`.session`) is opened again at
  once when the broker answered a session error, after a backoff otherwise.
- Acknowledgements a broker refused with a retriable error
  (:func:`.holdings.retried_ack_error`: not a moved leader or a partition it does not have,
  whose records it released) go again after a backoff (``retry_backoff_ms`` doubling up to
  ``retry_backoff_max_ms``, as Java's), until their deadline (:mod:`.holdings`), then fail
  with one timeout naming the last refusal; the last acknowledgements of ``close`` are not
  retried (nor are Java's).
- The loop and each request run as tasks of the consumer's
  :class:`~kafkawire.consumer.tasks.BackgroundTasks`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections import deque
from collections.abc import Iterable
from typing import Any

from kafkawire.cluster import Backoff, Cluster, TopicPartition
from kafkawire.consumer._waiting import wait_event
from kafkawire.consumer.fetching.record import ConsumerRecord
from kafkawire.consumer.inbox import Inbox
from kafkawire.consumer.tasks import BackgroundTasks, is_transient
from kafkawire.errors import (
    ClientClosedError,
    KafkawireError,
    ProtocolError,
    UnsupportedVersionError,
    error_for_code,
)
from kafkawire.records import Batch, RecordsError, decode_batches

from .acknowledgements import AcknowledgeType
from .completed_fetch import ShareCompletedFetch
from .errors import ShareSessionEndedError
from .holdings import Holdings, Ticket, acknowledging, retried_ack_error, wire_acks
from .leader_hints import follow_leader_hints
from .metrics import ShareConsumerMetrics
from .session import SHARE_ACKNOWLEDGE, SHARE_FETCH, PartitionId, ShareSession
from .settings import ShareConsumerSettings

__all__ = ["ShareFetcher"]

_log = logging.getLogger(__name__)

_IDLE = 60.0  # seconds the loop sleeps with nothing to do (any change wakes it sooner)
_SESSION_ERRORS = (122, 123, 133)  # SHARE_SESSION_NOT_FOUND, INVALID_..._EPOCH, ..._LIMIT_REACHED
_RECORD_LIMIT = 1  # ShareFetch v2's share_acquire_mode for "record_limit"


class ShareFetcher:
    """Keeps records coming for the member's partitions and its acknowledgements going;
    :meth:`drain` hands records out."""

    def __init__(
        self,
        cluster: Cluster,
        settings: ShareConsumerSettings,
        holdings: Holdings,
        member_id: str,
        *,
        tasks: BackgroundTasks,
        inbox: Inbox,
        metrics: ShareConsumerMetrics,
    ) -> None:
        self._cluster = cluster
        self._metrics = metrics
        self._settings = settings
        self._holdings = holdings
        self._member_id = member_id
        self._tasks = tasks
        self._inbox = inbox
        self._sessions: dict[int, ShareSession] = {}
        self._busy: dict[int, asyncio.Task[None]] = {}
        self._buffers: dict[TopicPartition, deque[ShareCompletedFetch]] = {}
        self._assigned: frozenset[TopicPartition] = frozenset()
        self._backoff_until: dict[int | TopicPartition, float] = {}
        self._ack_backoff = Backoff(
            initial=settings.retry_backoff_ms / 1000, maximum=settings.retry_backoff_max_ms / 1000
        )
        self._closing = False
        self._warned: set[str] = set()
        self._unreported: KafkawireError | None = None  # for the next drain
        self._wake = asyncio.Event()
        self.ready = asyncio.Event()  # records for getmany
        self.demand = False  # a getmany waits (what record_limit fetches for)
        self.lock_timeout_ms: int | None = None  # the last acquisition lock timeout heard

    # --- what the consumer calls -------------------------------------------------------------

    def start(self) -> None:
        self._tasks.spawn("share fetcher", self._run, lasting=True)

    def wake(self) -> None:
        self._wake.set()

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Fetch ``partitions`` from now on; records buffered of others are released."""
        self._assigned = frozenset(partitions)
        for tp in [tp for tp in self._buffers if tp not in self._assigned]:
            self._drop_buffered(tp, release=True)
        self.wake()

    def answer(self, tp: TopicPartition, acks: dict[int, int]) -> list[Ticket]:
        """Queue acknowledgements of held records of ``tp`` (offset -> type)."""
        tickets = self._holdings.queue(tp, acks)
        if tickets:
            self.wake()
        return tickets

    def drain(self, max_records: int) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Up to ``max_records`` buffered records. A record or batch that cannot be read ends
        it: what was taken before is returned, and the next call raises the error (it starts
        with that partition)."""
        unreported, self._unreported = self._unreported, None
        if unreported is not None:
            raise unreported
        out: dict[TopicPartition, list[ConsumerRecord]] = {}
        remaining = max_records
        settings = self._settings
        try:
            for tp in list(self._buffers):
                queue = self._buffers[tp]
                while queue and remaining > 0:
                    done = queue[0]
                    taken, error = done.take(
                        remaining, settings.key_deserializer, settings.value_deserializer
                    )
                    if error is not None:
                        if done.exhausted:
                            queue.popleft()
                        if not out:
                            raise error
                        self._unreported = error  # after the records taken before it
                        return out
                    if taken:
                        out.setdefault(tp, []).extend(taken)
                        remaining -= len(taken)
                    if done.exhausted:
                        queue.popleft()
                    elif not taken:
                        break
                if not queue:
                    del self._buffers[tp]
                    self.wake()  # its leader may be fetched again
                else:
                    self._buffers[tp] = self._buffers.pop(tp)  # the others first next time
                if remaining <= 0:
                    break
        finally:
            if not self._buffers:
                self.ready.clear()
            for tp, records in out.items():
                self._holdings.handed_out(tp, records)
        return out

    async def close(self, timeout: float) -> None:
        """Stop fetching, let the requests in flight end (within ``timeout`` seconds), and
        close every session with its last acknowledgements (ShareAcknowledge at epoch -1: the
        broker releases what is left)."""
        self._closing = True
        self.wake()
        busy = list(self._busy.values())
        if busy:
            await asyncio.wait(busy, timeout=timeout)
        closing = [
            self._acknowledge(node, final=True)
            for node, session in self._sessions.items()
            if node not in self._busy and session.open
        ]
        await asyncio.gather(*closing, return_exceptions=True)
        for node in self._holdings.nodes_with_queued():
            self._settle(
                self._holdings.take_queued(node),
                ShareSessionEndedError(
                    f"the consumer closed before its acknowledgements could reach broker {node}"
                ),
            )

    # --- the loop ----------------------------------------------------------------------------

    async def _run(self) -> None:
        while not self._closing:
            self._wake.clear()
            try:
                delay = await self._launch()
            except ClientClosedError:
                return
            except (KafkawireError, OSError) as exc:  # others: the task's owner reports them
                if not is_transient(exc):
                    self._inbox.put(exc)
                self._cluster.mark_metadata_stale()
                delay = self._backoff()
            await wait_event(self._wake, delay)

    async def _launch(self) -> float:
        """Start a request to each broker that has something to do and none in flight; the
        time until a backed-off one may be tried again."""
        now = time.monotonic()
        retry = self._holdings.next_retry()
        waits = [t - now for t in (*self._backoff_until.values(), retry or 0) if t > now]
        delay = min(waits, default=_IDLE)
        wanted = await self._leaders(now)
        for node in set(wanted) | set(self._holdings.nodes_with_queued(now)):
            if node in self._busy or self._closing or self._backoff_until.get(node, 0) > now:
                continue
            partitions = wanted.get(node, {})
            queued = self._holdings.queued_for(node, now)
            # what cannot ride a fetch (RENEWs, partitions not fetched there) goes first
            alone = any(t.renewing or t.tp not in partitions for t in queued)
            if partitions and not alone and self._fetchable(partitions):
                work = functools.partial(self._fetch, node, partitions)
                self._spawn(f"share fetch from broker {node}", node, work)
            elif queued:
                work = functools.partial(self._acknowledge, node)
                self._spawn(f"share acknowledge to broker {node}", node, work)
        return delay

    def _fetchable(self, partitions: dict[TopicPartition, PartitionId]) -> bool:
        """Nothing acquired from the leader is buffered, and (record_limit) a poll waits."""
        if any(self._buffers.get(tp) for tp in partitions):
            return False
        return self.demand or self._settings.share_acquire_mode != "record_limit"

    async def _leaders(self, now: float) -> dict[int, dict[TopicPartition, PartitionId]]:
        """The assigned partitions not backed off, by leader, with their share ids; data
        buffered from a leader that is no longer the partition's is dropped."""
        assigned = [tp for tp in self._assigned if self._backoff_until.get(tp, 0) <= now]
        if not assigned:
            return {}
        metadata = await self._cluster.metadata({tp.topic for tp in assigned})
        wanted: dict[int, dict[TopicPartition, PartitionId]] = {}
        for tp in assigned:
            topic = metadata.topics.get(tp.topic)
            try:
                leader = metadata.leader_for(tp.topic, tp.partition)
            except KafkawireError:  # no leader right now: the next metadata may name one
                self._cluster.mark_metadata_stale()
                continue
            if topic is None or topic.topic_id is None:
                continue
            buffered = self._buffers.get(tp)
            if buffered and buffered[0].node != leader:
                _log.info(
                    "%s/%s moved to broker %d: dropping what came from broker %d",
                    tp.topic,
                    tp.partition,
                    leader,
                    buffered[0].node,
                )
                self._drop_buffered(tp, release=False)
            wanted.setdefault(leader, {})[tp] = (topic.topic_id, tp.partition)
        return wanted

    def _spawn(self, name: str, node: int, work: Any) -> None:
        async def run() -> None:
            try:
                await work()
            finally:
                self._busy.pop(node, None)
                self.wake()

        self._busy[node] = self._tasks.spawn(name, run)

    # --- one ShareFetch ----------------------------------------------------------------------

    async def _fetch(self, node: int, partitions: dict[TopicPartition, PartitionId]) -> None:
        session = self._session(node)
        version = await self._version(node, SHARE_FETCH)
        if version is None:
            return
        tickets = self._live_tickets(session, set(partitions)) if session.open else []
        acks = wire_acks(tickets, partitions)
        settings = self._settings
        record_limit = settings.share_acquire_mode == "record_limit"
        if record_limit and version < 2:
            self._warn_once(
                "record_limit",
                f"broker {node} serves ShareFetch v{version}, without acquire modes (v2): "
                "share_acquire_mode='record_limit' acquires as 'batch_optimized' there",
            )
        request = session.fetch_request(
            list(partitions.values()),
            acks,
            version=version,
            max_wait_ms=settings.fetch_max_wait_ms,
            min_bytes=settings.fetch_min_bytes,
            max_bytes=settings.fetch_max_bytes,
            max_records=settings.max_poll_records,
            acquire_mode=_RECORD_LIMIT if record_limit else 0,
        )
        sent = time.monotonic()
        response = await self._send(session, request, tickets)
        if response is None:
            return
        latency_ms = (time.monotonic() - sent) * 1000
        self.lock_timeout_ms = response.acquisition_lock_timeout_ms or self.lock_timeout_ms
        names = {pid: tp for tp, pid in partitions.items()}
        moved = follow_leader_hints(self._cluster, response, names)
        answered: set[TopicPartition] = set()
        acquired = size = 0
        for topic in response.responses:
            for data in topic.partitions:
                tp = names.get((topic.topic_id, data.partition_index))
                if tp is None:
                    continue  # not asked for: dropped, as Java's handler drops it
                answered.add(tp)
                ack_error = error_for_code(data.acknowledge_error_code, acknowledging(tp, node))
                self._acknowledged(session.node, tp, tickets, ack_error)
                acquired += self._take(session, tp, data, moved=tp in moved)
                size += len(data.records or b"")
        self._metrics.fetched(latency_ms, size, acquired, response.throttle_time_ms)
        unanswered = [t for t in tickets if t.tp not in answered]
        self._settle(
            unanswered, ProtocolError(f"broker {node} did not answer the acknowledgements")
        )

    def _take(self, session: ShareSession, tp: TopicPartition, data: Any, *, moved: bool) -> int:
        """Buffer what one partition's answer acquired, or act on its error (``moved``: the
        answer named the partition's new leader, fetched at once); how many records it
        acquired for this member (new deliveries)."""
        error = error_for_code(data.error_code, f"ShareFetch of {tp.topic}/{tp.partition}")
        if error is not None:
            if moved:
                self._left_leader(session.node, tp, refresh=False)
                return 0
            if getattr(error, "invalid_metadata", False):
                self._left_leader(session.node, tp)
            self._partition_failed(tp, error)
            return 0
        ranges = [(a.first_offset, a.last_offset, a.delivery_count) for a in data.acquired_records]
        if not ranges:
            return 0
        acquired = self._holdings.acquire(tp, session.node, session.incarnation, ranges)
        if not acquired:
            return 0
        batches, bad = self._batches(data.records)
        done = ShareCompletedFetch(
            tp, session.node, batches, acquired, self._answer_for_member, error=bad
        )
        self._buffers.setdefault(tp, deque()).append(done)
        self.ready.set()
        return len(acquired)

    def _batches(self, records: Any) -> tuple[deque[Batch], RecordsError | None]:
        batches: deque[Batch] = deque()
        try:
            for batch in decode_batches(records or b"", check_crcs=self._settings.check_crcs):
                batches.append(batch)
        except RecordsError as exc:
            return batches, exc
        return batches, None

    def _answer_for_member(self, tp: TopicPartition, acks: dict[int, int]) -> None:
        """Acknowledgements the consumer makes itself (GAPs, releases of what it cannot read)."""
        self.answer(tp, acks)

    # --- one ShareAcknowledge ----------------------------------------------------------------

    async def _acknowledge(self, node: int, *, final: bool = False) -> None:
        session = self._session(node)
        if not session.open:
            self._settle(self._holdings.take_queued(node), self._ended(session))
            return
        version = await self._version(node, SHARE_ACKNOWLEDGE)
        if version is None:
            return
        tickets = self._live_tickets(session, None, final=final)
        if version < 2:
            renewing = [t for t in tickets if t.renewing]
            self._settle(
                renewing,
                UnsupportedVersionError(
                    f"broker {node} serves ShareAcknowledge v{version}: RENEW needs v2 "
                    "(KIP-1222, Kafka 4.2); the records' locks run out instead"
                ),
            )
            tickets = [t for t in tickets if not t.renewing]
        if not tickets and not final:
            return
        partitions = {t.tp: _pid(self._cluster, t.tp) for t in tickets}
        request = session.acknowledge_request(
            wire_acks(tickets, partitions), version=version, final=final
        )
        response = await self._send(session, request, tickets)
        if final:
            session.end(ShareSessionEndedError(f"the session with broker {node} was closed"))
        if response is None:
            return
        names = {pid: tp for tp, pid in partitions.items()}
        moved = follow_leader_hints(self._cluster, response, names)
        answered = set()
        for topic in response.responses:
            for data in topic.partitions:
                tp = names.get((topic.topic_id, data.partition_index))
                if tp is not None:
                    answered.add(tp)
                    error = error_for_code(data.error_code, acknowledging(tp, node))
                    self._acknowledged(node, tp, tickets, error, retry=not final, moved=tp in moved)
        unanswered = [t for t in tickets if t.tp not in answered]
        self._settle(
            unanswered, ProtocolError(f"broker {node} did not answer the acknowledgements")
        )

    # --- sessions and errors ----------------------------------------------------------------

    def _session(self, node: int) -> ShareSession:
        session = self._sessions.get(node)
        if session is None:
            group_id = self._settings.group_id
            session = self._sessions[node] = ShareSession(node, group_id, self._member_id)
        return session

    async def _version(self, node: int, api_key: int) -> int | None:
        """The version to speak to ``node`` (v1 at least: v0 was KIP-932's early access, whose
        protocol differs); ``None`` after reporting a broker without it."""
        version = await self._cluster.versions_for(node, api_key)
        if version >= 1:
            return version
        name = "ShareFetch" if api_key == SHARE_FETCH else "ShareAcknowledge"
        self._inbox.put(
            UnsupportedVersionError(
                f"broker {node} does not serve {name} v1 or later (share groups need Kafka "
                "4.1 or later)"
            )
        )
        self._backoff_until[node] = time.monotonic() + self._settings.retry_backoff_max_ms / 1000
        return None

    def _live_tickets(
        self, session: ShareSession, partitions: set[TopicPartition] | None, *, final: bool = False
    ) -> list[Ticket]:
        """The tickets queued for the session's broker (of ``partitions``, if given) that
        belong to its current incarnation, and (unless ``final``) whose backoff is over; those
        of an ended incarnation fail at once."""
        now = None if final else time.monotonic()
        tickets = self._holdings.take_queued(session.node, partitions, now=now)
        stale = [t for t in tickets if t.incarnation != session.incarnation]
        self._settle(stale, self._ended(session))
        return [t for t in tickets if t.incarnation == session.incarnation]

    async def _send(self, session: ShareSession, request: Any, tickets: list[Ticket]) -> Any:
        """``request`` to the session's broker; ``None`` if it failed (the session ends, the
        tickets sent with it fail)."""
        node = session.node
        self._metrics.acknowledgements_sent(sum(len(t.acks) for t in tickets))
        try:
            response = await self._cluster.send(request, node_id=node, retry=False)
        except ClientClosedError as exc:
            self._end(session, exc, tickets)
            raise
        except (KafkawireError, OSError) as exc:
            self._end(session, exc, tickets)
            session_error = getattr(exc, "code", None) in _SESSION_ERRORS
            _log.log(
                logging.INFO if session_error else logging.WARNING,
                "share session with broker %d ended (%s): the next fetch opens one",
                node,
                exc,
            )
            if not session_error:
                if not is_transient(exc):
                    self._inbox.put(exc)
                self._cluster.mark_metadata_stale()
                self._backoff_until[node] = time.monotonic() + self._backoff()
            return None
        except BaseException:  # cancelled: the broker may or may not have taken it
            self._end(session, ShareSessionEndedError("a request was given up"), tickets)
            raise
        error = error_for_code(response.error_code, response.error_message or "")
        if error is not None:
            self._end(session, error, tickets)
            self._inbox.put(error)
            self._backoff_until[node] = time.monotonic() + self._backoff()
            return None
        session.advance()
        return response

    def _end(self, session: ShareSession, reason: BaseException, tickets: list[Ticket]) -> None:
        """The session ended: what it acquired was released by the broker, so its buffered
        records go, and its acknowledgements fail."""
        session.end(reason)
        error = (
            reason if isinstance(reason, KafkawireError) else ShareSessionEndedError(str(reason))
        )
        self._settle(tickets, error)
        self._settle(self._holdings.take_queued(session.node), self._ended(session))
        for tp in [tp for tp, q in self._buffers.items() if q and q[0].node == session.node]:
            self._drop_buffered(tp, release=False)

    def _ended(self, session: ShareSession) -> ShareSessionEndedError:
        return ShareSessionEndedError(
            f"the share session with broker {session.node} ended ({session.ended_by}): the "
            "records acquired in it were released, to be delivered again"
        )

    def _settle(self, tickets: list[Ticket], error: KafkawireError | None) -> None:
        if error is not None:
            self._metrics.acknowledgements_failed(
                sum(len(t.acks) for t in tickets if not t.done.done())
            )
        if tickets:
            self._holdings.settle(tickets, error)

    def _acknowledged(
        self,
        node: int,
        tp: TopicPartition,
        tickets: list[Ticket],
        error: KafkawireError | None,
        *,
        retry: bool = True,
        moved: bool = False,
    ) -> None:
        """The outcome of ``tp``'s acknowledgements to ``node``: retried if the error is worth
        it (and ``retry``); one that says ``node`` no longer leads it (a moved leader) ends
        what was acquired there, buffered or not (``moved``: the answer named the new leader,
        so the metadata need not be asked)."""
        answered = [t for t in tickets if t.tp == tp]
        if error is not None and retry and retried_ack_error(error):
            self._retry(answered, error)
        else:
            self._settle(answered, error)
        if error is not None and getattr(error, "invalid_metadata", False):
            self._left_leader(node, tp, refresh=not moved)

    def _retry(self, tickets: list[Ticket], error: KafkawireError) -> None:
        """Queue ``tickets`` again after their backoff; those out of time fail."""
        expired = self._holdings.refused(tickets, error, self._ack_backoff)
        timeout = self._settings.default_api_timeout_ms / 1000
        for ticket in expired:
            self._settle([ticket], ticket.timed_out(timeout))
        self.wake()

    def _left_leader(self, node: int, tp: TopicPartition, *, refresh: bool = True) -> None:
        """``node`` no longer leads ``tp``: the records buffered from it are dropped (the new
        leader delivers them again), and (``refresh``) the metadata is asked again."""
        if refresh:
            self._cluster.mark_metadata_stale()
        buffered = self._buffers.get(tp)
        if buffered and buffered[0].node == node:
            self._drop_buffered(tp, release=False)
        self.wake()

    def _partition_failed(self, tp: TopicPartition, error: KafkawireError) -> None:
        if error.retriable:
            if getattr(error, "invalid_metadata", False):
                self._cluster.mark_metadata_stale()
            self._backoff_until[tp] = time.monotonic() + self._backoff()
        else:
            self._inbox.put(error)
            self._backoff_until[tp] = time.monotonic() + self._settings.retry_backoff_max_ms / 1000

    def _drop_buffered(self, tp: TopicPartition, *, release: bool) -> None:
        """Drop what is buffered of ``tp``: released (the member lets it go), or only
        forgotten (its session ended: the broker released it already)."""
        queue = self._buffers.pop(tp, deque())
        offsets = [o for done in queue for o in done.offsets_left()]
        if release and offsets:
            self.answer(tp, dict.fromkeys(offsets, AcknowledgeType.RELEASE))
        else:
            self._holdings.forget(tp, offsets)

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            _log.warning("%s", message)

    def _backoff(self) -> float:
        return self._settings.retry_backoff_ms / 1000


def _pid(cluster: Cluster, tp: TopicPartition) -> PartitionId:
    metadata = cluster.current_metadata
    topic = metadata.topics.get(tp.topic) if metadata is not None else None
    topic_id = topic.topic_id if topic is not None else None
    return (topic_id or uuid.UUID(int=0), tp.partition)
