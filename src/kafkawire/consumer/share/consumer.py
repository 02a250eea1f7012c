"""The share consumer facade: what applications call (Java's ``KafkaShareConsumer``).

The parts: :mod:`.settings` (what can be set), :mod:`.membership` (the member's place in its
share group), :mod:`.fetcher` with :mod:`.session` (ShareFetch and ShareAcknowledge per
leader), :mod:`.holdings` (what the member acquired and the acknowledgements under way),
:mod:`.completed_fetch` (reading what a fetch acquired).

Acknowledgement, as Java's (``share_acknowledgement_mode``):

- ``"implicit"``: each ``getmany`` (each step of an iteration) and each ``commit`` accept
  every record the ``getmany`` before returned; ``close`` does not (Java's ``close`` releases
  what was not acknowledged): ``commit`` first to accept the last batch.
- ``"explicit"``: every record a ``getmany`` returned must be acknowledged
  (``acknowledge(record, type)``) before the next one, else it raises
  :class:`~kafkawire.consumer.ConsumerStateError` (the records can still be acknowledged).

Acknowledgements go with the next request to the record's leader: a ShareFetch, or a
ShareAcknowledge when no fetch is due (again, after a backoff, if the broker refused them
with a retriable error); ``commit`` waits for their outcome, per partition. The
acknowledgement commit callback hears every outcome, in the application's calls (``getmany``,
``commit``, ``close``), as Java's runs in ``poll``. Errors of the background work reach the
application through the consumer's one :class:`~kafkawire.consumer.inbox.Inbox`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from typing_extensions import Unpack

from kafkawire.client.observability import Observable
from kafkawire.cluster import Cluster, ConnectionFactory, TopicPartition, build_settings
from kafkawire.consumer._waiting import wait_any
from kafkawire.consumer.errors import ConsumerStateError, UnsupportedGroupProtocolError
from kafkawire.consumer.fetching.record import ConsumerRecord
from kafkawire.consumer.inbox import Inbox
from kafkawire.consumer.metrics import timed_poll
from kafkawire.consumer.tasks import BackgroundTasks
from kafkawire.errors import ClientClosedError, KafkawireError
from kafkawire.operations.telemetry import TelemetryReporter

from .acknowledgements import AcknowledgeType
from .fetcher import ShareFetcher
from .holdings import Holdings, Ticket
from .membership import SHARE_GROUP_HEARTBEAT, ShareMembership
from .metrics import ShareConsumerMetrics, share_telemetry_labels
from .session import SHARE_ACKNOWLEDGE, SHARE_FETCH
from .settings import ShareConsumerOptions, ShareConsumerSettings
from .wakeup import Wakeup

__all__ = ["AcknowledgementCommitCallback", "ShareConsumer"]

_log = logging.getLogger(__name__)

AcknowledgementCommitCallback = Callable[
    [dict[TopicPartition, set[int]], KafkawireError | None], object
]
"""Called with the offsets of one partition whose acknowledgements completed, and the error
they failed with (``None``: done); it may be a coroutine function (then awaited). Java's
``AcknowledgementCommitCallback.onComplete``."""

_APIS = {
    SHARE_GROUP_HEARTBEAT: "ShareGroupHeartbeat",
    SHARE_FETCH: "ShareFetch",
    SHARE_ACKNOWLEDGE: "ShareAcknowledge",
}


class ShareConsumer(Observable):
    """``async with ShareConsumer("topic", group_id="g", bootstrap_servers=bs) as consumer``.

    A member of share group ``group_id`` (KIP-932): members share the topics' partitions, a
    partition may be read by several members, and each record is acquired by one member for
    a lock time and acknowledged one by one. Options are :class:`ShareConsumerSettings`'
    (the Java client's names), as keyword arguments or as ``settings``. ``connect`` replaces
    how connections open (for tests).
    """

    def __init__(
        self,
        *topics: str,
        bootstrap_servers: str | Sequence[str] | None = None,
        settings: ShareConsumerSettings | None = None,
        connect: ConnectionFactory | None = None,
        **options: Unpack[ShareConsumerOptions],
    ) -> None:
        if settings is None and "group_id" not in options:
            raise TypeError("ShareConsumer() needs group_id: the share group to join")
        settings = build_settings(
            ShareConsumerSettings, "ShareConsumer", bootstrap_servers, settings, options
        )
        self.settings = settings
        self._cluster = Cluster(
            settings.bootstrap_servers,
            settings.client_settings(call_timeout_ms=settings.default_api_timeout_ms),
            connect=connect,
            metrics=settings.metrics_registry(),
            metric_group_prefix="consumer",  # Java's share consumer's network client's
        )
        self._metrics = ShareConsumerMetrics(self._cluster.metrics)
        self._tasks = BackgroundTasks(restart_delay=settings.retry_backoff_max_ms / 1000)
        self._inbox = Inbox(self._tasks)
        self._holdings = Holdings(retry_for=settings.default_api_timeout_ms / 1000)
        self._membership = ShareMembership(
            self._cluster,
            settings.group_id,
            rack=settings.client_rack,
            backoff_ms=settings.retry_backoff_ms,
            assigned=self._assigned,
            tasks=self._tasks,
            inbox=self._inbox,
            metrics=self._metrics,
        )
        self._telemetry = TelemetryReporter(
            self._cluster,
            client=f"share consumer {settings.client_id}",
            enabled=settings.enable_metrics_push,
            wait=settings.default_api_timeout_ms / 1000,
            labels=lambda: share_telemetry_labels(settings.group_id, self._membership.member_id),
        )
        self._fetcher = ShareFetcher(
            self._cluster,
            settings,
            self._holdings,
            self._membership.member_id,
            tasks=self._tasks,
            inbox=self._inbox,
            metrics=self._metrics,
        )
        # What the last getmany returned and the application has not answered for yet.
        self._delivered: dict[TopicPartition, dict[int, ConsumerRecord]] = {}
        self._iterated: deque[ConsumerRecord] = deque()
        self._callback: AcknowledgementCommitCallback | None = None
        self._started = self._closed = False
        self._closing = asyncio.Event()
        self._wakeup = Wakeup()
        self._wakers = (
            self._fetcher.ready,
            *self._inbox.signals,
            self._closing,
            self._wakeup.event,
        )
        self._topics = frozenset(topics)

    # --- life cycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, check that the brokers serve share groups, and join the group (with
        topics)."""
        self._wakeup.bind()
        await self._cluster.__aenter__()
        try:
            await self._check_served()
        except BaseException:
            await self._cluster.close()
            raise
        self._fetcher.start()
        self._telemetry.start(self._tasks)
        self._membership.start()
        self._membership.subscribe(self._topics)
        self._started = True

    async def _check_served(self) -> None:
        """Raise :class:`UnsupportedGroupProtocolError` naming the first API of share groups
        (v1 or later) the broker lacks."""
        conn = await self._cluster.any_connection()
        for key, name in _APIS.items():
            served = conn.api_versions.ranges.get(key)
            if not served or served.stop <= 1:
                raise UnsupportedGroupProtocolError(
                    f"ShareConsumer needs API {key} ({name}) v1 or later, which the broker at "
                    f"{conn.peer} does not serve: share groups (KIP-932) need Kafka 4.1 or later"
                )

    async def __aenter__(self) -> ShareConsumer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the share sessions with the acknowledgements queued (the broker releases
        every record acquired and not acknowledged: in implicit mode, the last batch too,
        unless ``commit`` accepted it), leave the group, and close every connection. A
        pending ``getmany`` ends with :class:`~kafkawire.errors.ClientClosedError`. It does not
        raise for what fails meanwhile (logged); calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        self._closing.set()
        self._wakeup.disable()
        try:
            if self._started:
                timeout = self.settings.request_timeout_ms / 1000
                await self._fetcher.close(timeout)
                # The last metrics push (KIP-714) goes while the member is in its group.
                await self._telemetry.close(timeout)
                await self._membership.close()
                await self._run_callbacks()
        except Exception:  # close must release the connections whatever this was
            _log.exception("closing the share consumer failed")
        finally:
            await self._tasks.close()
            await self._cluster.close()

    def _check_running(self) -> None:
        if self._closed:
            raise ClientClosedError("the share consumer is closed")
        if not self._started:
            raise ConsumerStateError(
                "the share consumer is not started: use `async with` or start()"
            )
        self._inbox.raise_failures()

    # --- what to read ------------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str]) -> None:
        """Read ``topics`` (a list of names; it replaces the subscription, and an empty one
        leaves the group as :meth:`unsubscribe` does)."""
        if isinstance(topics, str):
            raise TypeError(
                f"subscribe() takes a list of topic names, not a str: pass [{topics!r}]"
            )
        self._topics = frozenset(topics)
        if self._started:
            self._membership.subscribe(self._topics)

    def unsubscribe(self) -> None:
        """Leave the group (records delivered can still be acknowledged)."""
        self.subscribe([])

    def subscription(self) -> set[str]:
        """The topics the consumer is subscribed to."""
        return set(self._topics)

    def assignment(self) -> set[TopicPartition]:
        """The partitions the group gives this member now (others may share them)."""
        return set(self._membership.assignment)

    def _assigned(self, partitions: frozenset[TopicPartition]) -> None:
        self._fetcher.assign(partitions)

    @property
    def acquisition_lock_timeout_ms(self) -> int | None:
        """The acquisition lock the broker last named (how long a record stays this
        member's once fetched), or ``None`` before the first fetch (Java's
        ``acquisitionLockTimeoutMs()``)."""
        return self._fetcher.lock_timeout_ms

    def wakeup(self) -> None:
        """End the ``getmany`` (or iteration step, or ``commit``) waiting now with
        :class:`~kafkawire.consumer.share.WakeupError`, else the next one (once; Java's
        ``wakeup()``). Callable from any thread; a closed consumer ignores it."""
        self._wakeup.trigger()

    def set_acknowledgement_commit_callback(
        self, callback: AcknowledgementCommitCallback | None
    ) -> None:
        """Hear the outcome of every acknowledgement (see :data:`AcknowledgementCommitCallback`),
        in the calls of the application; ``None`` stops it."""
        self._callback = callback
        if callback is None:
            self._holdings.settled.clear()

    # --- reading -----------------------------------------------------------------------------

    @timed_poll
    async def getmany(
        self, *, timeout_ms: int = 0, max_records: int | None = None
    ) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Records acquired for this member: what is buffered at once, else what arrives
        within ``timeout_ms``; ``{}`` if nothing does. At most ``max_records`` (default
        ``max_poll_records``).

        In implicit mode it first accepts every record the previous ``getmany`` returned; in
        explicit mode those must all be acknowledged, else it raises
        :class:`~kafkawire.consumer.ConsumerStateError`. A record whose deserializer raises was
        released, and is raised here as a
        :class:`~kafkawire.consumer.share.ShareRecordDeserializationError` after the records
        before it."""
        self._check_running()
        await self._run_callbacks()
        self._answer_previous()
        if not self._topics:
            raise ConsumerStateError("the share consumer is not subscribed to any topic")
        wanted = max_records or self.settings.max_poll_records
        deadline = time.monotonic() + timeout_ms / 1000
        try:
            while True:
                self._inbox.raise_for_poll()
                # Before taking records, never after: a wakeup must not lose what was taken.
                self._wakeup.check("getmany")
                records = self._take(wanted)
                if records:
                    return records
                left = deadline - time.monotonic()
                if left <= 0:
                    return {}
                self._fetcher.demand = True
                self._fetcher.wake()
                await wait_any(self._wakers, left)
                self._check_running()
        finally:
            self._fetcher.demand = False

    def _take(self, wanted: int) -> dict[TopicPartition, list[ConsumerRecord]]:
        """Renewed records first (delivered again), then what the fetcher buffered."""
        out: dict[TopicPartition, list[ConsumerRecord]] = {}
        renewed = self._holdings.renewed
        while renewed and wanted > 0:
            record = renewed.popleft()
            out.setdefault(TopicPartition(record.topic, record.partition), []).append(record)
            wanted -= 1
        if wanted > 0:
            for tp, records in self._fetcher.drain(wanted).items():
                out.setdefault(tp, []).extend(records)
        for tp, records in out.items():
            delivered = self._delivered.setdefault(tp, {})
            for record in records:
                delivered[record.offset] = record
        return out

    def _answer_previous(self) -> None:
        """What a poll does with the previous poll's records: accept them (implicit), or
        check they were all acknowledged (explicit)."""
        if not self._delivered:
            return
        if self.settings.explicit:
            tp, records = next(iter(self._delivered.items()))
            offset = next(iter(records))
            count = sum(len(records) for records in self._delivered.values())
            raise ConsumerStateError(
                f"{count} records the last getmany returned are not "
                f"acknowledged (the first: {tp.topic}/{tp.partition} at offset {offset}): with "
                "share_acknowledgement_mode='explicit', acknowledge each before the next getmany"
            )
        self._accept_delivered()

    def _accept_delivered(self) -> list[Ticket]:
        delivered, self._delivered = self._delivered, {}
        accept = AcknowledgeType.ACCEPT
        return [
            t
            for tp, records in delivered.items()
            for t in self._fetcher.answer(tp, dict.fromkeys(records, accept))
        ]

    def __aiter__(self) -> ShareConsumer:
        return self

    async def __anext__(self) -> ConsumerRecord:
        """The next record, waiting as long as it takes; ends only by ``close``. Each step is
        a poll: in implicit mode it accepts the record the step before yielded."""
        while True:
            try:
                batch = await self.getmany(timeout_ms=1000, max_records=1)
            except ClientClosedError:
                raise StopAsyncIteration from None
            for records in batch.values():
                return records[0]

    # --- acknowledging -----------------------------------------------------------------------

    def acknowledge(
        self, record: ConsumerRecord, type: AcknowledgeType = AcknowledgeType.ACCEPT
    ) -> None:
        """Answer for ``record``, which the last ``getmany`` returned (explicit mode only):
        ACCEPT, RELEASE, REJECT or RENEW. It goes with the next request to its leader, or
        with :meth:`commit`."""
        self._check_running()
        if not self.settings.explicit:
            raise ConsumerStateError(
                "acknowledge() needs share_acknowledgement_mode='explicit' (in implicit mode "
                "each getmany and commit accepts what the last getmany returned)"
            )
        kind = AcknowledgeType(type)
        tp = TopicPartition(record.topic, record.partition)
        delivered = self._delivered.get(tp, {})
        if delivered.pop(record.offset, None) is None:
            raise ConsumerStateError(
                f"{tp.topic}/{tp.partition} at offset {record.offset} is not waiting to be "
                "acknowledged (acknowledged already, or not returned by the last getmany)"
            )
        if not delivered:
            del self._delivered[tp]
        self._fetcher.answer(tp, {record.offset: kind})

    async def commit(self) -> dict[TopicPartition, KafkawireError | None]:
        """Send the acknowledgements not sent yet (in implicit mode, after accepting every
        record the last ``getmany`` returned) and wait, up to ``default_api_timeout_ms``, for
        the outcome of every acknowledgement not settled yet, those under way included (Java's
        ``commitSync`` waits only for those it sends): per partition, the error its
        acknowledgements failed with, or ``None``. Nothing unsettled: ``{}`` at once. A
        refusal worth retrying is retried meanwhile (:mod:`.fetcher`); one still refused when
        the time is up is a :class:`~kafkawire.cluster.CallTimeoutError` naming it. A
        :meth:`wakeup` ends the wait with :class:`~.errors.WakeupError`."""
        self._check_running()
        if not self.settings.explicit:
            self._accept_delivered()
        tickets = list(self._holdings.unsettled)
        results: dict[TopicPartition, KafkawireError | None] = {}
        if tickets:
            self._fetcher.wake()
            limit = self.settings.default_api_timeout_ms
            await self._until_settled(tickets, limit / 1000)
            for ticket in tickets:
                error = (
                    ticket.done.result() if ticket.done.done() else ticket.timed_out(limit / 1000)
                )
                if results.get(ticket.tp) is None:
                    results[ticket.tp] = error
        await self._run_callbacks()
        return results

    async def _until_settled(self, tickets: list[Ticket], timeout: float) -> None:
        """Until every one of ``tickets`` is settled or ``timeout`` seconds have passed; a
        wakeup raises (the tickets go on)."""
        deadline = time.monotonic() + timeout
        pending = [t.done for t in tickets]
        while (pending := [f for f in pending if not f.done()]) and (
            left := deadline - time.monotonic()
        ) > 0:
            await wait_any([*pending, self._wakeup.event], left)
            self._wakeup.check("commit")

    async def _run_callbacks(self) -> None:
        """Tell the callback of every outcome settled since it last heard."""
        settled = self._holdings.settled
        while settled:
            ticket = settled.popleft()
            if self._callback is None:
                continue
            outcome = ticket.done.result()
            result = self._callback({ticket.tp: set(ticket.acks)}, outcome)
            if inspect.isawaitable(result):
                await result
