"""The asyncio producer: ``send`` queues a record and hands back its delivery.

The parts, one module each: :mod:`.settings` (what can be set), :mod:`.partitioner` (where a
record goes), :mod:`.accumulator` (batches waiting, bounded memory), :mod:`.sender` (the
background task that sends them), :mod:`.idempotence` and :mod:`.transactions`.

Nothing is lost silently: each record's :class:`~.batch.Delivery` resolves to its
:class:`~.batch.RecordMetadata` or raises what stopped it; ``close`` waits for what is queued
and in flight (up to its timeout) and fails the rest with
:class:`~kafkawire.errors.ClientClosedError`, logging how many records that was.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from typing_extensions import Unpack

from kafkawire.cluster import (
    Cluster,
    ClusterMetadata,
    ConnectionFactory,
    InvalidPartitionError,
    TopicPartition,
)
from kafkawire.cluster.java_settings import build_settings
from kafkawire.errors import ClientClosedError, UnknownTopicOrPartitionError
from kafkawire.net.errors import RequestTimeoutError
from kafkawire.records import HeaderInput

from .accumulator import RecordAccumulator
from .batch import Delivery, RecordMetadata
from .errors import RecordTooLargeError, TransactionAbortedError
from .idempotence import ProducerIdentity
from .partitioner import StickyPartitioner, partition_for_key
from .sender import Sender
from .settings import ProducerOptions, ProducerSettings
from .transactions import TransactionManager

__all__ = ["Producer"]

_log = logging.getLogger(__name__)

_RECORD_OVERHEAD = 21  # a v2 record's length, attributes, deltas and lengths at their widest
_BATCH_OVERHEAD = 61  # a v2 batch header
_MAX_TIMESTAMP = (1 << 63) - 1
_BYTES = (bytes, bytearray, memoryview)


class Producer:
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
        self._cluster = Cluster(
            settings.bootstrap_servers,
            settings.client_settings(call_timeout_ms=settings.max_block_ms),
            connect=connect,
        )
        self._sticky = StickyPartitioner(settings.batch_size)
        self._accumulator: RecordAccumulator | None = None
        self._sender: Sender | None = None
        self._sender_task: asyncio.Task[None] | None = None
        self._transactions: TransactionManager | None = None
        self._partition_counts: dict[str, int] = {}
        self._counts_of: ClusterMetadata | None = None  # the metadata the counts come from
        self._closed = False

    # --- life cycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, get a producer id (when idempotent or transactional), start sending."""
        settings = self.settings
        await self._cluster.__aenter__()
        try:
            self._accumulator = RecordAccumulator(
                batch_size=settings.batch_size,
                linger=settings.linger_ms / 1000,
                buffer_memory=settings.buffer_memory,
                compression=settings.compression,
                compression_level=settings.compression_level,
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
                await self._transactions.initialize()
            elif identity is not None:
                await identity.initialize()
        except BaseException:
            await self._cluster.close()
            raise
        self._sender = Sender(
            self._cluster, self._accumulator, settings, identity, self._transactions
        )
        self._sender_task = asyncio.create_task(self._sender.run(), name="kafkawire-producer")

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
        self._closed = True
        sender, task = self._sender, self._sender_task
        if sender is not None and task is not None:
            sender.stop()
            done, _ = await asyncio.wait([task], timeout=timeout)
            if not done:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            elif task.exception() is not None:
                _log.error("the producer's sender failed", exc_info=task.exception())
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
        ``max_block_ms``. Keys and values are bytes (or ``None``), or whatever the configured
        serializers take. Raises at once for a record that can never be sent (wrong types,
        larger than ``max_request_size``), a closed producer, or no open transaction.
        """
        accumulator = self._accumulator
        if self._closed or accumulator is None:
            raise ClientClosedError(
                "the producer is closed" if self._closed else "the producer has not started"
            )
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
        size = _RECORD_OVERHEAD + (len(key) if key else 0) + (len(value) if value else 0)
        if headers:
            headers = _check_headers(headers)
            size += _headers_size(headers)
        else:
            headers = ()
        if size > self._max_record_size:
            raise RecordTooLargeError(
                f"a record of {size} bytes does not fit in max_request_size "
                f"({self.settings.max_request_size})"
            )
        count = self._partition_counts.get(topic)
        if count is None or self._counts_of is not self._cluster.current_metadata:
            count = await self._partition_count(topic, self._deadline())
        if partition is None:
            partition = self._choose_partition(topic, key, size, count)
        elif not 0 <= partition < count:
            raise InvalidPartitionError(
                f"topic {topic!r} has {count} partitions (0-{count - 1}): "
                f"partition {partition} does not exist"
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
        delivery = accumulator.append(topic, partition, key, value, headers, timestamp, size)
        if delivery is None:  # buffer_memory is full: wait for room
            await accumulator.reserve(size, self._deadline())
            delivery = accumulator.append(
                topic, partition, key, value, headers, timestamp, size, reserved=True
            )
            assert delivery is not None
        if delivery.starts_batch:
            # A send that never waits never lets the sender task run: a caller sending in a
            # tight loop would fill every batch before one went out. Once per batch, yield.
            await asyncio.sleep(0)
        return delivery

    def _serialized(self, key: Any, value: Any) -> tuple[bytes | None, bytes | None]:
        settings = self.settings
        if key is not None and (settings.key_serializer or type(key) is not bytes):
            key = _serialize(settings.key_serializer, key, "key")
        if value is not None and (settings.value_serializer or type(value) is not bytes):
            value = _serialize(settings.value_serializer, value, "value")
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
        """:meth:`send` and wait for the record's delivery."""
        delivery = await self.send(
            topic, value, key, partition=partition, timestamp_ms=timestamp_ms, headers=headers
        )
        return await delivery

    async def flush(self) -> None:
        """Send every record queued so far at once (ignoring ``linger_ms``) and wait until
        each is delivered or failed (failures stay on the records' deliveries)."""
        accumulator = self._accumulator
        if accumulator is None:
            return
        waiting = [b.future for b in accumulator.unfinished]
        accumulator.flushing += 1
        accumulator.wakeup.set()
        try:
            await asyncio.gather(*(asyncio.shield(f) for f in waiting), return_exceptions=True)
        finally:
            accumulator.flushing -= 1

    async def partitions_for(self, topic: str) -> list[int]:
        """The partition indexes of ``topic`` (waiting up to ``max_block_ms`` for it)."""
        deadline = time.monotonic() + self.settings.max_block_ms / 1000
        return sorted((await self._topic_metadata(topic, deadline)).partitions)

    async def _partition_count(self, topic: str, deadline: float) -> int:
        """``topic``'s partition count, remembered until the metadata is refreshed."""
        count = len((await self._topic_metadata(topic, deadline)).partitions)
        current = self._cluster.current_metadata
        if self._counts_of is not current:
            self._partition_counts.clear()
            self._counts_of = current
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
        """The topic's metadata, waiting (up to ``deadline``) for a new or auto-created one."""
        metadata = await self._cluster.metadata()
        known = metadata.topics.get(topic)
        if known is not None and known.partitions and not known.error_code:
            return known

        async def attempt() -> Any:
            fresh = await self._cluster.refresh_metadata([topic], auto_create=True)
            found = fresh.topics.get(topic)
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
        self, offsets: Mapping[TopicPartition, int], group_id: str
    ) -> None:
        """Commit a consumer group's ``offsets`` (the next offset to read per partition) with
        the transaction: consume-transform-produce, exactly once."""
        await self._txn().send_offsets(offsets, group_id)

    async def commit_transaction(self) -> None:
        """Deliver every record of the transaction, then commit it."""
        transactions = self._txn()
        transactions.check_sendable()
        await self.flush()
        await transactions.end(commit=True)

    async def abort_transaction(self) -> None:
        """Drop the transaction's records not yet sent, wait for those in flight, abort."""
        transactions = self._txn()
        accumulator = self._accumulator
        assert accumulator is not None
        assert self._sender is not None
        aborted = TransactionAbortedError("the transaction was aborted before the record was sent")
        for batch in accumulator.remove_all():
            batch.fail(aborted)
            await accumulator.release(batch)
        await self._sender.wait_idle()
        await transactions.end(commit=False)

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
        return self._transactions


def _serialize(serializer: Any, value: Any, what: str) -> bytes | None:
    if serializer is not None:
        value = serializer(value)
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise TypeError(
        f"send(): the {what} is {type(value).__name__}, not bytes or None; encode it or "
        f"give the producer a {what}_serializer"
    )


def _check_headers(headers: Sequence[HeaderInput]) -> Sequence[HeaderInput]:
    for index, header in enumerate(headers):
        if isinstance(header, tuple):
            name, data = header if len(header) == 2 else (None, None)
            if not isinstance(name, str) or not (data is None or isinstance(data, _BYTES)):
                raise TypeError(
                    f"send(): headers[{index}] must be (str, bytes or None), not {header!r}"
                )
    return headers


def _headers_size(headers: Sequence[HeaderInput]) -> int:
    size = 0
    for header in headers:
        name, data = (header.key, header.value) if not isinstance(header, tuple) else header
        size += 10 + len(name.encode()) + (len(data) if data else 0)
    return size
