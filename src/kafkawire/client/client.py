"""The low-level client: any request to the right broker, plus the simple conveniences.

``KafkaClient.send`` takes any generated request object, built at any version, and returns the
broker's typed response; the cluster layer below routes, converts and retries. The conveniences
(produce a list of values to one partition, fetch at an offset, page through a partition, list
offsets, create a topic) are what the oldest Python Kafka clients offered, on modern brokers.

Per-partition error codes in produce, fetch and list-offsets responses become exceptions; the
retriable ones (a leader moved, metadata is stale) refresh metadata and retry until the
call's ``default_api_timeout_ms`` passes. Produce is at least once: a retry after a timeout or
a lost connection may append a batch the broker had already written.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

from typing_extensions import Unpack

from kafkawire.cluster import Cluster, ConnectionFactory, TopicPartition
from kafkawire.cluster._routing import partition_answer
from kafkawire.cluster.java_settings import build_settings
from kafkawire.errors import KafkawireError, TopicAlreadyExistsError, error_for_code, raise_for_code
from kafkawire.messages import RequestMessage, ResponseMessage
from kafkawire.messages.create_topics import v7 as create_topics
from kafkawire.operations import list_offsets as listing
from kafkawire.operations.fetch_request import FETCH, FetchOptions, PartitionFetch, fetch_request
from kafkawire.operations.list_offsets import EARLIEST, LATEST, ListedOffset
from kafkawire.operations.produce_request import PRODUCE, produce_request, produce_version
from kafkawire.records import (
    Compression,
    LegacyBatchBuilder,
    ReadCommittedFilter,
    Record,
    RecordBatchBuilder,
    TimestampType,
    decode_batches,
)

from ._legacy_options import LegacyClientOptions, translate_legacy_options
from .settings import KafkaClientOptions, KafkaClientSettings

__all__ = ["EARLIEST", "LATEST", "FetchResult", "KafkaClient", "ListedOffset"]

T = TypeVar("T")
R = TypeVar("R", bound=ResponseMessage)

_NO_TOPIC_ID = uuid.UUID(int=0)
_READ_COMMITTED = 1

Value = bytes | None
KeyAndValue = tuple[bytes | None, bytes | None]


@dataclass(frozen=True, slots=True)
class FetchResult:
    """What one fetch of one partition returned."""

    records: list[Record]
    next_offset: int  # where the next fetch should start
    high_watermark: int
    log_start_offset: int
    last_stable_offset: int = -1  # the end of what read_committed may see; -1 before Fetch v4
    timestamp_types: tuple[TimestampType, ...] = ()
    """Each record's timestamp type (its batch's: the producer's create time, or the broker's
    log-append time), in the order of ``records``."""


class _Arguments(KafkaClientOptions, LegacyClientOptions, total=False):
    """The keyword arguments KafkaClient takes: its options, and for one release the old
    names (deprecated)."""


class KafkaClient:
    """``async with KafkaClient("127.0.0.1:9092") as client: await client.produce(...)``.

    Options are :class:`~kafkawire.client.KafkaClientSettings`' (the Java client's names,
    times in milliseconds: ``request_timeout_ms``, ``default_api_timeout_ms``, TLS, SASL,
    client id, ...), as keyword arguments or as ``settings``; the names in seconds that came
    before them still work for one release, with a ``DeprecationWarning``. ``connect``
    replaces how a connection is opened (for tests and custom transports).
    """

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str] | None = None,
        *,
        settings: KafkaClientSettings | None = None,
        connect: ConnectionFactory | None = None,
        **options: Unpack[_Arguments],
    ) -> None:
        caller = type(self).__name__
        given: dict[str, Any] = {**options}
        if bootstrap_servers is not None:  # so that an old ``bootstrap=`` beside it is refused
            given["bootstrap_servers"] = bootstrap_servers
        given = translate_legacy_options(caller, given, stacklevel=2)
        self.settings = build_settings(
            KafkaClientSettings, caller, given.pop("bootstrap_servers", None), settings, given
        )
        self.cluster = Cluster(
            self.settings.bootstrap_servers,
            self.settings.cluster_settings(),
            connect=connect,
            metrics=self.settings.metrics_registry(),
        )

    async def __aenter__(self) -> KafkaClient:
        await self.cluster.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close every connection; calls still in flight end with ``ClientClosedError``."""
        await self.cluster.close()

    def metrics(self) -> dict[str, dict[str, float]]:
        """The client's metrics now, ``{group: {name: value}}``: connections made
        (``kafka-client-metrics``: ``connection-creation-rate``, ``-total``,
        ``connection-count``) and each broker's request latencies
        (``kafka-client-node-metrics,node-id=node-1``: ``request-latency-avg``, ``-max``);
        see :meth:`kafkawire.producer.Producer.metrics`."""
        return self.cluster.metrics.as_dict()

    @overload
    async def send(self, request: RequestMessage[R], *, negotiate: Literal[False] = ...) -> R: ...
    @overload
    async def send(self, request: RequestMessage[R], *, negotiate: Literal[True]) -> Any: ...
    async def send(self, request: RequestMessage[R], *, negotiate: bool = False) -> Any:
        """Any generated request, to the broker its ``__route__`` names; its typed response.

        The request goes at the version of its class; a broker that does not serve that
        version gets nothing and the caller a :class:`~kafkawire.net.NoCommonVersionError`
        naming both ranges. With ``negotiate=True`` it is converted to the highest version
        both sides support, and the response is of that version (typed ``Any``: which one is
        known only at run time).
        """
        if negotiate:
            return await self.cluster.send(request, negotiate=True)
        return await self.cluster.send(request)

    async def create_topic(
        self,
        name: str,
        *,
        partitions: int = 1,
        replication_factor: int = 1,
        configs: dict[str, str] | None = None,
        exist_ok: bool = False,
        timeout_ms: int = 30_000,
    ) -> None:
        """Create topic ``name``; with ``exist_ok`` an existing topic is not an error.

        Raises the broker's error for the topic (retriable ones included: not retried here).
        """
        topic = create_topics.CreatableTopic(
            name=name,
            num_partitions=partitions,
            replication_factor=replication_factor,
            configs=tuple(
                create_topics.CreatableTopicConfig(name=k, value=v)
                for k, v in (configs or {}).items()
            ),
        )
        request = create_topics.CreateTopicsRequest(topics=(topic,), timeout_ms=timeout_ms)
        result = (await self.send(request, negotiate=True)).topics[0]
        error = error_for_code(result.error_code, getattr(result, "error_message", None))
        if error is not None and not (exist_ok and isinstance(error, TopicAlreadyExistsError)):
            raise error
        await self.cluster.refresh_metadata([name])

    async def produce(
        self,
        topic: str,
        partition: int,
        values: Iterable[Value | KeyAndValue],
        *,
        acks: int = -1,
        compression: Compression = Compression.NONE,
        timeout_ms: int = 30_000,
    ) -> int:
        """Append ``values`` (or ``(key, value)`` pairs) to one partition as one batch.

        Returns the offset of the first record (``-1`` with ``acks=0``, which waits for nothing).
        Retries are at least once: after a timeout the batch may have been written already.
        """
        items = _records_to_produce(values)
        timestamp = int(time.time() * 1000)

        async def attempt() -> int:
            leader, version, topic_id = await self._target(topic, partition, PRODUCE)
            builder = _builder(version, compression)
            for key, value in items:
                builder.append(key, value, timestamp=timestamp)
            request = produce_request(
                version,
                {topic: [(partition, builder.build())]},
                topic_ids={topic: topic_id},
                acks=acks,
                timeout_ms=timeout_ms,
            )
            response = await self.cluster.send(request, node_id=leader, retry=False)
            if acks == 0:  # the broker answers nothing: the response is empty
                return -1
            answer = partition_answer(response, topic_id if version > 12 else topic, partition)
            raise_for_code(answer.error_code, getattr(answer, "error_message", None))
            return int(answer.base_offset)

        return await self._retrying(f"produce to {topic}/{partition}", attempt)

    async def fetch(
        self,
        topic: str,
        partition: int,
        offset: int,
        *,
        max_wait_ms: int = 500,
        min_bytes: int = 1,
        max_bytes: int = 50 * 1024 * 1024,
        partition_max_bytes: int = 1024 * 1024,
        isolation_level: int = 0,
    ) -> FetchResult:
        """Records of one partition from ``offset``, waiting up to ``max_wait_ms`` for
        ``min_bytes``; the result says where to fetch next.

        Control batches are never returned; with ``isolation_level=1`` (read_committed) neither
        are the records of aborted transactions.
        """
        data = await self.fetch_partition(
            topic,
            partition,
            offset,
            max_wait_ms=max_wait_ms,
            min_bytes=min_bytes,
            max_bytes=max_bytes,
            partition_max_bytes=partition_max_bytes,
            isolation_level=isolation_level,
        )
        return _fetch_result(data, offset)

    async def fetch_partition(
        self,
        topic: str,
        partition: int,
        offset: int,
        *,
        max_wait_ms: int = 500,
        min_bytes: int = 1,
        max_bytes: int = 50 * 1024 * 1024,
        partition_max_bytes: int = 1024 * 1024,
        isolation_level: int = 0,
    ) -> Any:
        """:meth:`fetch`'s request and errors, but the FetchResponse's answer for the
        partition as it came (``records`` undecoded, ``aborted_transactions``,
        ``high_watermark``, ...): for readers that decode the batches themselves
        (:func:`kafkawire.records.decode_batches`)."""

        options = FetchOptions(max_wait_ms, min_bytes, max_bytes, isolation_level)

        async def attempt() -> Any:
            leader, version, topic_id = await self._target(topic, partition, FETCH)
            wanted = PartitionFetch(offset, -1, partition_max_bytes)  # -1: no epoch checked
            plan = fetch_request(
                version, {topic: topic_id}, {TopicPartition(topic, partition): wanted}, options
            )
            response = await self.cluster.send(plan.request, node_id=leader, retry=False)
            raise_for_code(getattr(response, "error_code", 0))  # top level from v7
            data = partition_answer(response, topic_id if version > 12 else topic, partition)
            raise_for_code(data.error_code)
            return data

        return await self._retrying(f"fetch from {topic}/{partition}", attempt)

    async def records(
        self, topic: str, partition: int, offset: int, *, stop_at_end: bool = False, **options: Any
    ) -> AsyncIterator[Record]:
        """Every record of a partition from ``offset``, paging with :meth:`fetch`.

        With ``stop_at_end`` it ends at the high watermark seen by the first fetch (at
        read_committed, the last stable offset: records past it are not visible yet); otherwise
        it keeps long-polling for new records. ``options`` go to :meth:`fetch`.
        """
        end: int | None = None
        read_committed = options.get("isolation_level") == _READ_COMMITTED
        while end is None or offset < end:
            result = await self.fetch(topic, partition, offset, **options)
            if stop_at_end and end is None:
                end = result.high_watermark
                if read_committed and result.last_stable_offset >= 0:
                    end = result.last_stable_offset
            for record in result.records:
                if end is not None and record.offset >= end:
                    return
                yield record
            offset = result.next_offset

    async def list_offsets(
        self, topic: str, partition: int, timestamp: int = LATEST
    ) -> ListedOffset:
        """The first offset whose timestamp is at or after ``timestamp`` (ms since the epoch),
        or :data:`LATEST` / :data:`EARLIEST`."""

        tp = TopicPartition(topic, partition)
        found = (await listing.list_offsets(self.cluster, {tp: timestamp}))[tp]
        if isinstance(found, KafkawireError):
            raise found
        return found

    async def _target(self, topic: str, partition: int, api_key: int) -> tuple[int, int, uuid.UUID]:
        """The partition's leader, the version to use there, and the topic's id."""
        metadata = await self.cluster.metadata([topic])
        leader = metadata.leader_for(topic, partition)
        version = await self.cluster.versions_for(leader, api_key)
        topic_id = metadata.topics[topic].topic_id
        # A broker that gave no topic id gets topic names (Produce and Fetch alike).
        return leader, produce_version(version, [topic_id]), topic_id or _NO_TOPIC_ID

    async def _retrying(self, what: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` again after retriable errors, refreshing metadata, until the
        cluster's retry deadline, which bounds the whole call."""
        return await self.cluster.call(
            what, attempt, forget=lambda error: self.cluster.mark_metadata_stale()
        )


def _records_to_produce(values: Any) -> list[KeyAndValue]:
    """``values`` as (key, value) pairs, or a ``TypeError`` naming the first bad one, before
    anything is built or sent."""
    if isinstance(values, str | bytes | bytearray | memoryview) or not hasattr(values, "__iter__"):
        raise TypeError(
            f"produce() takes values as a list of values or (key, value) pairs, "
            f"not {type(values).__name__}; wrap a single value in a list"
        )
    items: list[KeyAndValue] = []
    for index, item in enumerate(values):
        key, value = item if isinstance(item, tuple) and len(item) == 2 else (None, item)
        for what, part in (("key", key), ("value", value)):
            if part is not None and not isinstance(part, bytes | bytearray | memoryview):
                raise TypeError(
                    f"produce(): the {what} of values[{index}] is {type(part).__name__}, "
                    "not bytes or None (encode it first)"
                )
        items.append((key, value))
    return items


def _builder(
    produce_version: int, compression: Compression
) -> RecordBatchBuilder | LegacyBatchBuilder:
    """Produce v3+ carries record batches (magic 2); v2 magic 1 and v0-v1 magic 0 message sets."""
    if produce_version >= 3:
        return RecordBatchBuilder(compression=compression)
    return LegacyBatchBuilder(magic=1 if produce_version == 2 else 0, compression=compression)


def _fetch_result(data: Any, offset: int) -> FetchResult:
    """One partition of a FetchResponse: its visible records and where to fetch next.

    The broker lists aborted transactions only for read_committed fetches (v4+), so the filter
    drops aborted records exactly then, and control batches always.
    """
    visible = ReadCommittedFilter(getattr(data, "aborted_transactions", None)).accepts
    records: list[Record] = []
    types: list[TimestampType] = []
    next_offset = offset
    for batch in decode_batches(data.records or b""):
        next_offset = max(next_offset, batch.next_offset)
        if visible(batch):
            kept = [r for r in batch.records if r.offset >= offset]
            records += kept
            types += [batch.timestamp_type] * len(kept)
    return FetchResult(
        records=records,
        timestamp_types=tuple(types),
        next_offset=next_offset,
        high_watermark=data.high_watermark,
        log_start_offset=getattr(data, "log_start_offset", -1),
        last_stable_offset=getattr(data, "last_stable_offset", -1),
    )
