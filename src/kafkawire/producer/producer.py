"""The asyncio producer: ``send`` queues a record and hands back its delivery.

The parts, one module each: :mod:`.settings` (what can be set), :mod:`.partitioner` (where a
record goes), :mod:`.accumulator` (batches waiting, bounded memory), :mod:`.sender` (the
background task that sends them), :mod:`.idempotence` and :mod:`.transactions`.

Nothing is lost silently: each record's :class:`~.batch.Delivery` resolves to its
:class:`~.batch.RecordMetadata` or raises what stopped it; ``close`` waits for what is queued
and in flight (up to its timeout) and fails the rest with
:class:`~kafkawire.errors.ClientClosedError`, logging how many records that was. A ``send``
waiting when ``close`` runs raises it too.

The sender and its tasks run under one :class:`~kafkawire.cluster.supervisor.Supervisor`:
if one ends with an error (one it did not expect, or one of the cluster's that ends the
producer, such as an InitProducerId refused for good), that error is logged once at ERROR,
every delivery still pending fails with it (an unexpected one wrapped in
:class:`~.errors.ProducerFailedError`), the other tasks are cancelled, and every later call
(``send``, ``flush``, the transaction calls) raises it.

Times, as in Kafka's Java client: ``max_block_ms`` bounds what the application's calls wait
for (``send``: a new topic's metadata and room in ``buffer_memory``; ``partitions_for``; the
transaction calls), never a request the sender makes; ``request_timeout_ms`` bounds each
request; ``delivery_timeout_ms`` a record's whole life after ``send`` returned.

Cancellation: a ``send`` that is cancelled queued nothing. Its only waits come before its
record is queued, and once it is queued ``send`` returns without waiting again: a caller may
send again after a cancellation without writing the record twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from typing_extensions import Unpack

from kafkawire.client.group_metadata import ConsumerGroupMetadata
from kafkawire.client.observability import Observable
from kafkawire.cluster import Cluster, ConnectionFactory, TopicPartition
from kafkawire.cluster.java_settings import build_settings
from kafkawire.cluster.supervisor import Supervisor
from kafkawire.errors import (
    ClientClosedError,
    KafkawireError,
    UnknownTopicOrPartitionError,
    error_for_code,
)
from kafkawire.net.errors import RequestTimeoutError
from kafkawire.operations.telemetry import TelemetryReporter
from kafkawire.records import HeaderInput

from . import bulk
from .accumulator import RecordAccumulator
from .arguments import check_headers, check_topic_name, checked_partition, serialize
from .batch import RECORD_OVERHEAD, Delivery, RecordMetadata, headers_size
from .bulk import BatchDelivery
from .errors import ProducerFailedError, RecordTooLargeError, TransactionAbortedError
from .health import ProducerHealth, producer_health
from .idempotence import ProducerIdentity
from .metrics import ProducerMetrics
from .partitioner import StickyPartitioner, partition_for_key
from .send_path import SendPath, SendStep
from .sender import Sender
from .settings import ProducerOptions, ProducerSettings
from .transactions import OffsetWithMetadata, PreparedTransaction, TransactionManager

__all__ = ["Producer"]

_log = logging.getLogger(__name__)

_BATCH_OVERHEAD = 61  # a v2 batch header
_MAX_TIMESTAMP = (1 << 63) - 1


class Producer(Observable):
    """``async with Producer(bootstrap_servers="host:9092") as producer: ...``.

    Options are :class:`ProducerSettings`' (the Java client's names), as keyword arguments or
    as ``settings``. ``connect`` replaces how connections open (for tests).
    """

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str] | None = None,
        *,
        settings: ProducerSettings | None = None,
        connect: ConnectionFactory | None = None,
        **options: Unpack[ProducerOptions],
    ) -> None:
        settings = build_settings(
            ProducerSettings, "Producer", bootstrap_servers, settings, options
        )
        self.settings = settings
        # Read by every send: settings' values it would otherwise derive each time.
        self._no_serializers = settings.key_serializer is None and settings.value_serializer is None
        self._max_record_size = settings.max_request_size - _BATCH_OVERHEAD
        # Each of the cluster's calls (a request and its retries) is bounded by one request
        # timeout; what the application waits on gets max_block_ms as its own deadline.
        self._cluster = Cluster(
            settings.bootstrap_servers,
            settings.client_settings(call_timeout_ms=settings.request_timeout_ms),
            connect=connect,
            metrics=settings.metrics_registry(),
            metric_group_prefix="producer",
        )
        self._metrics = ProducerMetrics(self._cluster.metrics, settings.buffer_memory)
        txn = settings.transactional_id
        labels = {} if txn is None else {"transactional_id": txn}  # Java's resource labels
        self._telemetry = TelemetryReporter(
            self._cluster,
            client=f"producer {settings.client_id}",
            enabled=settings.enable_metrics_push,
            wait=settings.max_block_ms / 1000,
            labels=lambda: labels,
        )
        self._sticky = StickyPartitioner(settings.batch_size)
        self._accumulator: RecordAccumulator | None = None
        self._sender: Sender | None = None
        self._sender_task: asyncio.Task[None] | None = None
        self._tasks = Supervisor(
            f"producer {settings.client_id}", log=_log, wrap=_failure, on_failure=self._failed
        )
        self._transactions: TransactionManager | None = None
        # Each topic's partition count, as the metadata last said: forgotten at each refresh.
        self._partition_counts: dict[str, int] = {}
        self._cluster.on_metadata(lambda _: self._partition_counts.clear())
        self._closed = False
        self._refusing = False  # closed or failed: send() looks at why (one flag, per record)
        self._yield_due = False  # the last send started a batch: the next lets the sender run
        # send()'s short path (see there) while it may be taken, else None.
        self._fast: SendStep | None = None

    # --- life cycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect and start sending; a transactional producer gets its producer id first
        (InitProducerId, within ``max_block_ms``: Java's ``initTransactions``). An idempotent
        one gets it in the background, as Java's does: records wait for it."""
        settings = self.settings
        await self._cluster.__aenter__()
        try:
            self._accumulator = RecordAccumulator(
                batch_size=settings.batch_size,
                linger=settings.linger_ms / 1000,
                buffer_memory=settings.buffer_memory,
                compression=settings.compression,
                compression_level=settings.compression_level,
                delivery_timeout=settings.delivery_timeout_ms / 1000,
            )
            identity = None
            if settings.idempotent:
                identity = ProducerIdentity(
                    self._cluster,
                    transactional_id=settings.transactional_id,
                    transaction_timeout_ms=settings.transaction_timeout_ms,
                )
            if settings.transactional_id is not None:
                assert identity is not None
                self._transactions = TransactionManager(self._cluster, identity)
                await self._transactions.initialize(self._deadline())
        except BaseException:
            await self._cluster.close()
            raise
        self._sender = Sender(
            self._cluster,
            self._accumulator,
            settings,
            identity,
            self._transactions,
            supervisor=self._tasks,
            metrics=self._metrics,
        )
        self._sender_task = self._tasks.spawn("sender", self._sender.run)
        if self._no_serializers and self._transactions is None:
            chooser = None if settings.partitioner is None else self._choose_partition
            self._fast = SendPath(
                self._accumulator,
                self._sticky,
                self._partition_counts,
                self._max_record_size,
                chooser,
            )
        self._metrics.attach(self._accumulator, self._sender)
        self._telemetry.start(self._tasks)

    def health(self) -> ProducerHealth:
        """Whether the producer is making progress now, and why not (the rules:
        :mod:`kafkawire.producer.health`); a plain call, cheap."""
        return producer_health(
            self.settings, self._accumulator, self._sender_task, self._tasks, self._cluster
        )

    def _failed(self, failure: BaseException) -> None:
        """A task of the producer ended on an error it does not handle: the producer cannot
        go on. Every delivery pending fails with it, and every task ends."""
        self._refusing = True
        self._fast = None
        assert self._accumulator is not None
        self._accumulator.close(failure)
        for batch in list(self._accumulator.unfinished):
            batch.fail(failure)
        self._tasks.cancel()

    def _raise_failure(self) -> None:
        """Raise what ended the producer, if something did (at every call)."""
        if self._tasks.failure is not None:
            raise self._tasks.failure

    def _check_usable(self) -> None:
        """Raise unless the producer is started, not closed, and has not failed."""
        if self._closed or self._accumulator is None:
            raise ClientClosedError(
                "the producer is closed" if self._closed else "the producer has not started"
            )
        self._raise_failure()

    async def __aenter__(self) -> Producer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, timeout: float | None = None) -> None:
        """Send what is queued and wait for it (up to ``timeout`` seconds; ``None``: until
        each batch is delivered or its delivery timeout passes), then close.

        Records not delivered by then fail with ClientClosedError on their deliveries; how
        many is logged. Calling it again does nothing.
        """
        if self._closed:
            return
        self._closed = self._refusing = True
        self._fast = None
        if self._accumulator is not None:
            self._accumulator.close(
                ClientClosedError("the producer was closed while send() waited: nothing queued")
            )
        sender, task = self._sender, self._sender_task
        if sender is not None and task is not None:
            sender.stop()
            await asyncio.wait([task], timeout=timeout)
        bound = self.settings.request_timeout_ms / 1000  # the last metrics push's (KIP-714)
        await self._telemetry.close(bound if timeout is None else min(timeout, bound))
        await self._tasks.close()
        unfinished = () if self._accumulator is None else self._accumulator.unfinished
        left = [b for b in unfinished if not b.future.done()]
        if left:
            error = ClientClosedError("the producer closed before the record was delivered")
            for batch in left:
                batch.fail(error)
            _log.error("producer closed with %d records undelivered", sum(len(b) for b in left))
        await self._cluster.close()

    # --- sending -----------------------------------------------------------------------------

    async def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        *,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Sequence[HeaderInput] | None = None,
    ) -> Delivery:
        """Queue a record; return its :class:`~.batch.Delivery` (``await`` it for the
        :class:`~.batch.RecordMetadata`).

        Waits only for room in ``buffer_memory`` or for a new topic's metadata, each up to
        ``max_block_ms``, and only before the record is queued: cancelled, it queued nothing.
        Keys and values are bytes (or ``None``), or whatever the configured serializers take;
        ``headers`` a list of ``(str, bytes or None)`` pairs or :class:`~kafkawire.records.Header`
        values. Raises at once for a record that can never be sent (wrong types, a topic name
        Kafka cannot have, larger than ``max_request_size``), a topic the broker refuses (not
        authorized, invalid), a closed or failed producer, or no open transaction.
        """
        # The common case in one call, for it runs once per record: bytes or None, no headers,
        # no timestamp, a topic whose partition count is known, and room in the partition's
        # open batch and in buffer_memory (the rules: .send_path). Anything else, or a batch
        # to start, takes the full path (with a user's partitioner's choice, made once).
        fast = self._fast
        if fast is not None and headers is None and timestamp_ms is None:
            sent = fast.send(topic, value, key, partition)
            if isinstance(sent, Delivery):
                return sent
            if sent is not None:
                partition = sent
        return await self._send(topic, value, key, partition, timestamp_ms, headers)

    async def _send(  # noqa: PLR0917 - send()'s arguments, passed on as they came
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int | None,
        timestamp_ms: int | None,
        headers: Sequence[HeaderInput] | None,
    ) -> Delivery:
        """:meth:`send`'s full path: any record, and waits."""
        accumulator = self._accumulator
        if accumulator is None or self._refusing:
            self._check_usable()
        if self._yield_due:
            # A send that never waits never lets the sender task run: a caller sending in a
            # tight loop would fill every batch before one went out. Once per batch, yield;
            # here, before anything is queued, so that a cancellation here queues nothing.
            self._yield_due = False
            await asyncio.sleep(0)
        if self._transactions is not None:
            self._transactions.check_sendable()
        # The common case (bytes or None, no serializer) is checked inline: this runs once per
        # record, and each call or lookup it saves is a measurable share of the producer's time.
        if not (
            self._no_serializers
            and (key is None or type(key) is bytes)
            and (value is None or type(value) is bytes)
        ):
            key, value = self._serialized(key, value)
        size = RECORD_OVERHEAD + (len(key) if key else 0) + (len(value) if value else 0)
        if headers:
            headers = check_headers(headers)
            size += headers_size(headers)
        else:
            if headers is not None:
                check_headers(headers)  # an empty one of the wrong shape ({}, "") too
            headers = ()
        if size > self._max_record_size:
            raise RecordTooLargeError(
                f"a record of {size} bytes does not fit in max_request_size "
                f"({self.settings.max_request_size})"
            )
        if timestamp_ms is None:
            timestamp = time.time_ns() // 1_000_000
        elif (
            isinstance(timestamp_ms, int)
            and not isinstance(timestamp_ms, bool)
            and 0 <= timestamp_ms <= _MAX_TIMESTAMP
        ):
            timestamp = timestamp_ms
        else:
            raise ValueError(
                f"send(): timestamp_ms must be an int of milliseconds since the epoch "
                f"(0 to {_MAX_TIMESTAMP}), not {timestamp_ms!r}"
            )
        count = self._partition_counts.get(topic)
        if count is None:
            count = await self._partition_count(topic, self._deadline())
        if partition is None:
            partition = self._choose_partition(topic, key, size, count)
        elif partition.__class__ is not int or not 0 <= partition < count:
            partition = checked_partition(topic, partition, count)
        # From here the record is queued without another wait (the accumulator refuses it
        # once the producer is closed or failed).
        assert accumulator is not None
        delivery = accumulator.append(topic, partition, key, value, headers, timestamp, size)
        if delivery is None:  # buffer_memory is full: wait for room
            await accumulator.reserve(size, self._deadline())
            delivery = accumulator.append(
                topic, partition, key, value, headers, timestamp, size, reserved=True
            )
            assert delivery is not None
        if delivery.starts_batch:
            self._yield_due = True
        return delivery

    async def send_batch(
        self,
        topic: str,
        values: Sequence[Any] | Any,
        *,
        keys: Sequence[Any] | Any | None = None,
        partition: int | Sequence[int | None] | Any | None = None,
        headers: Sequence[Sequence[HeaderInput] | None] | None = None,
        timestamps: Sequence[int] | Any | None = None,
    ) -> BatchDelivery:
        """Queue many records of ``topic`` at once; return one
        :class:`~.bulk.BatchDelivery` for them all (``await`` it for the
        :class:`~.bulk.SentBatch`: the first offset per partition; or the
        :class:`~.bulk.SendBatchError` with each record's error).

        ``values`` and ``keys`` are sequences of bytes or ``None`` (or of what the
        serializers take), or pyarrow binary or string arrays, read in place; ``partition``
        an int for all, or one per record (``None`` there: chosen as :meth:`send` chooses);
        ``headers`` one list per record (or ``None``); ``timestamps`` ints of milliseconds,
        or an Arrow int64 or timestamp[ms] array (``None``: now, for all). Records are
        partitioned and queued as :meth:`send` would queue each, in their order per
        partition, with no Python step per record where none is needed (see
        :mod:`.bulk`). Every record is checked before any is queued; then the call waits
        for room in ``buffer_memory`` as it fills it (``max_block_ms`` each time). Cancelled
        then, the records queued so far are sent, the rest are not.
        """
        accumulator = self._accumulator
        if accumulator is None or self._refusing:
            self._check_usable()
        assert accumulator is not None
        if self._transactions is not None:
            self._transactions.check_sendable()
        settings = self.settings
        records = bulk.columns(
            values,
            keys,
            headers,
            timestamps,
            now=time.time_ns() // 1_000_000,
            key_serializer=settings.key_serializer,
            value_serializer=settings.value_serializer,
        )
        total, largest, at = records.measure()
        if largest > min(self._max_record_size, settings.buffer_memory):
            raise RecordTooLargeError(
                f"send_batch(): record {at} is {largest} bytes, more than max_request_size "
                f"({settings.max_request_size}) or buffer_memory ({settings.buffer_memory}) take"
            )
        count = await self._partition_count(topic, self._deadline())
        found = bulk.routes(topic, records, partition, count, settings.partitioner)
        segments = await bulk.queue(
            accumulator,
            records,
            found,
            topic=topic,
            partition_count=count,
            sticky=self._sticky,
            total=total,
            deadline=self._deadline,
        )
        return BatchDelivery(topic, records.record_count, segments)

    def _serialized(self, key: Any, value: Any) -> tuple[bytes | None, bytes | None]:
        settings = self.settings
        if key is not None and (settings.key_serializer or type(key) is not bytes):
            key = serialize(settings.key_serializer, key, "key")
        if value is not None and (settings.value_serializer or type(value) is not bytes):
            value = serialize(settings.value_serializer, value, "value")
        return key, value

    def _deadline(self) -> float:
        """When a ``send`` starting now must stop waiting (``max_block_ms``)."""
        return time.monotonic() + self.settings.max_block_ms / 1000

    async def send_and_wait(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        *,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Sequence[HeaderInput] | None = None,
    ) -> RecordMetadata:
        """:meth:`send` and wait for the record's delivery. Cancelled once the record is
        queued, it stops waiting: the record is still sent (its delivery is dropped)."""
        delivery = await self.send(
            topic, value, key, partition=partition, timestamp_ms=timestamp_ms, headers=headers
        )
        return await delivery

    async def flush(self) -> None:
        """Send every record queued so far at once (ignoring ``linger_ms``) and wait until
        each is delivered or failed (failures stay on the records' deliveries). Raises what
        ended the producer, if it failed."""
        accumulator = self._accumulator
        if accumulator is None:
            return
        self._raise_failure()
        waiting = [b.future for b in accumulator.unfinished]
        accumulator.flushing += 1
        accumulator.wakeup.set()
        try:
            await asyncio.gather(*(asyncio.shield(f) for f in waiting), return_exceptions=True)
        finally:
            accumulator.flushing -= 1
        self._raise_failure()

    async def partitions_for(self, topic: str) -> list[int]:
        """The partition indexes of ``topic`` (waiting up to ``max_block_ms`` for it)."""
        self._check_usable()
        deadline = time.monotonic() + self.settings.max_block_ms / 1000
        return sorted((await self._topic_metadata(topic, deadline)).partitions)

    async def _partition_count(self, topic: str, deadline: float) -> int:
        """``topic``'s partition count, remembered until the metadata is refreshed."""
        count = len((await self._topic_metadata(topic, deadline)).partitions)
        self._partition_counts[topic] = count
        return count

    def _choose_partition(self, topic: str, key: bytes | None, size: int, count: int) -> int:
        chooser = self.settings.partitioner
        if chooser is not None:
            chosen = chooser(topic, key, count)
            if not 0 <= chosen < count:
                raise ValueError(
                    f"the partitioner chose {chosen} for {topic!r} of {count} partitions"
                )
            return chosen
        if key is None:
            return self._sticky.partition(topic, count, size)
        return partition_for_key(key, count)

    async def _topic_metadata(self, topic: str, deadline: float) -> Any:
        """The topic's metadata: the cached one if it names the topic's partitions (as
        Java's ``send`` takes it, stale or not), else waiting (up to ``deadline``) for a new
        or auto-created one. A name Kafka cannot have is refused without asking, and a topic
        the broker refuses for good (not authorized, invalid) fails at once with its error."""
        if not isinstance(topic, str):
            raise TypeError(f"the topic must be a str, not {topic!r}")
        cached = self._cluster.current_metadata
        known = cached.topics.get(topic) if cached is not None else None
        if known is not None and known.partitions and not known.error_code:
            return known
        check_topic_name(topic)

        async def attempt() -> Any:
            fresh = await self._cluster.refresh_metadata([topic], auto_create=True)
            found = fresh.topics.get(topic)
            if found is not None and found.error_code:
                error = error_for_code(found.error_code, f"metadata for topic {topic!r}")
                if error is not None and not error.retriable:
                    raise error
            if found is None or not found.partitions or found.error_code:
                raise UnknownTopicOrPartitionError(f"topic {topic!r} is not in the metadata")
            return found

        try:
            return await self._cluster.call(
                f"metadata for topic {topic!r}", attempt, deadline=deadline
            )
        except (RequestTimeoutError, UnknownTopicOrPartitionError) as exc:
            raise UnknownTopicOrPartitionError(
                f"topic {topic!r} is not in the cluster's metadata after max_block_ms "
                f"({self.settings.max_block_ms} ms)"
            ) from exc

    # --- transactions --------------------------------------------------------------------------

    def begin_transaction(self) -> None:
        """Start a transaction: what is sent until commit or abort is written all or nothing."""
        self._txn().begin()

    async def send_offsets_to_transaction(
        self,
        offsets: Mapping[TopicPartition, OffsetWithMetadata],
        group: ConsumerGroupMetadata | str,
    ) -> None:
        """Commit a consumer group's ``offsets`` (the next offset to read per partition, or
        ``(offset, metadata)``) with the transaction: consume-transform-produce, exactly once.

        ``group`` is the consuming member's ``Consumer.group_metadata()``, as Java's
        ``sendOffsetsToTransaction(offsets, ConsumerGroupMetadata)`` takes it: the coordinator
        then refuses the offsets of a member the group has moved on from (a zombie; KIP-447),
        raising ``IllegalGenerationError``, ``UnknownMemberIdError`` or
        ``FencedInstanceIdError``, and the transaction must be aborted. A group id alone
        (Java's older form) commits without that check. Waits up to ``max_block_ms``."""
        if isinstance(group, str):
            group = ConsumerGroupMetadata(group)
        elif not isinstance(group, ConsumerGroupMetadata):
            raise TypeError(
                "send_offsets_to_transaction(): group must be Consumer.group_metadata() or a "
                f"group id, not {type(group).__name__}"
            )
        await self._txn().send_offsets(offsets, group, self._deadline())

    async def commit_transaction(self) -> None:
        """Deliver every record of the transaction, then commit it (waiting up to
        ``max_block_ms`` for the coordinator). No record may be sent from the moment it is
        called. A commit that failed without ending the producer may be called again (it
        cannot be aborted then: Java's rule, since the coordinator may have committed)."""
        transactions = self._txn()
        transactions.begin_commit()
        await self.flush()
        await transactions.end(commit=True, deadline=self._deadline())

    async def prepare_transaction(self) -> PreparedTransaction:
        """Deliver every record of the transaction and hand it over open: the first phase of
        a two-phase commit.

        :func:`~kafkawire.producer.end_transaction` then commits or aborts it, from this
        process or another, with the producer id and epoch in the returned value (or this
        producer's ``commit_transaction`` or ``abort_transaction``, as Java's KIP-939
        producer). It begins no other transaction until then. Until the transaction ends, a new
        producer with the same ``transactional_id`` fences it (and aborts it), and the
        coordinator aborts it once ``transaction_timeout_ms`` has passed since it began.
        """
        transactions = self._txn()
        transactions.check_sendable()
        await self.flush()
        return transactions.prepare()

    async def abort_transaction(self) -> None:
        """Drop the transaction's records not yet sent, wait for those in flight, abort. No
        record may be sent from the moment it is called. Fails, it may be called again."""
        transactions = self._txn()
        accumulator = self._accumulator
        sender = self._sender
        assert accumulator is not None
        assert sender is not None
        transactions.begin_abort()
        aborted = TransactionAbortedError("the transaction was aborted before the record was sent")
        for batch in accumulator.remove_all():
            sender.discard(batch, aborted)
        await sender.wait_idle()
        await transactions.end(commit=False, deadline=self._deadline())

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Producer]:
        """``async with producer.transaction():`` begins a transaction, commits it when the
        block ends normally and aborts it when the block raises."""
        self.begin_transaction()
        try:
            yield self
        except BaseException:
            await self.abort_transaction()
            raise
        await self.commit_transaction()

    def _txn(self) -> TransactionManager:
        if self._transactions is None:
            raise TypeError("transactions need a producer created with a transactional_id")
        self._raise_failure()
        return self._transactions


def _failure(task: str, error: Exception) -> BaseException:
    """What ends the producer when ``task`` meets ``error``: a Kafka error as it is (an
    InitProducerId refused for good, ...), anything else as a :class:`ProducerFailedError`."""
    if isinstance(error, KafkawireError):
        return error
    return ProducerFailedError(f"the producer's {task} failed: {error!r}")
