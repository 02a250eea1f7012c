"""Fake answers for the consumer tests on fake brokers, and :class:`LogLeader`, a fake leader of
topic ``t`` that serves crafted logs.

The answer builders take the generated module of the request's version (``messages(key,
version)``) and the request. Batches: :func:`batch` is a plain v2 batch of ``count`` records
(values ``b"<offset>"``); :func:`crafted_batch` writes one with whatever offset deltas and
``last_offset_delta`` a test wants, as a broken broker might.

:class:`LogLeader` is the handler of a one-broker ``FakeCluster``: it serves each partition's
log (a list of batches) from the fetch offset on, answers ListOffsets (earliest 0, latest the
log's end), FindCoordinator (itself) and OffsetFetch (``committed``), and leaves every other
request unanswered (a group that never forms). ``holds`` make requests of an API wait for an
event, and ``asked(api_key)`` is set once a request of that API came; ``from_any_offset``
answers every fetch with the whole log (a broker that ignores the fetch offset);
``extra_partition`` is named in every Fetch answer, unasked.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from kafkawire.records import Compression, RecordBatchBuilder, decode_batches
from kafkawire.records.batch_v2 import encode_batch
from kafkawire.records.v2_records import encode_record
from kafkawire.records.varint import small_varints
from tests.net.fakebroker import FakeClient, messages

FETCH, LIST_OFFSETS, OFFSET_FETCH, FIND_COORDINATOR = 1, 2, 9, 10


def batch(base: int, count: int, compression: Compression = Compression.NONE) -> bytes:
    builder = RecordBatchBuilder(base_offset=base, compression=compression)
    for i in range(count):
        builder.append(None, b"%d" % (base + i), timestamp=1)
    return builder.build()


def crafted_batch(
    base: int,
    deltas: Sequence[int],
    *,
    last_offset_delta: int | None = None,
    values: Sequence[bytes] | None = None,
) -> bytes:
    """A v2 batch whose records have the offset ``deltas`` given (repeated or out of order if
    a test wants), values ``b"<offset>"`` unless given, and ``last_offset_delta`` as given
    (by default the last delta, as a sound batch has)."""
    small = small_varints()
    values = values or [b"%d" % (base + d) for d in deltas]
    records = b"".join(
        encode_record(d, 0, None, v, headers=(), small=small)
        for d, v in zip(deltas, values, strict=True)
    )
    return encode_batch(
        records,
        count=len(deltas),
        compression=Compression.NONE,
        compression_level=None,
        attributes=0,
        base_offset=base,
        partition_leader_epoch=-1,
        last_offset_delta=deltas[-1] if last_offset_delta is None else last_offset_delta,
        base_timestamp=1,
        max_timestamp=1,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
    )


def fetch_answer(header: Any, request: Any, error: int = 0, records: bytes = b"") -> Any:
    """An answer to a Fetch for one partition of ``t``: ``error``, or ``records``."""
    module = messages(FETCH, header.request_api_version)
    wanted = request.topics[0].partitions[0]
    data = module.PartitionData(
        partition_index=wanted.partition, error_code=error, high_watermark=100, records=records
    )
    return module.FetchResponse(
        responses=(module.FetchableTopicResponse(topic="t", partitions=(data,)),)
    )


def offsets_answer(header: Any, request: Any, offset: int, timestamp: int = -1) -> Any:
    """An answer to ListOffsets giving ``offset`` (and ``timestamp``) for every partition."""
    module = messages(LIST_OFFSETS, header.request_api_version)
    answers = tuple(
        module.ListOffsetsPartitionResponse(
            partition_index=p.partition_index, offset=offset, timestamp=timestamp
        )
        for p in request.topics[0].partitions
    )
    return module.ListOffsetsResponse(
        topics=(module.ListOffsetsTopicResponse(name="t", partitions=answers),)
    )


def same_topic(topic: Any) -> dict[str, Any]:
    """How a Fetch answer names its request's topic: by id from v13, by name before."""
    if hasattr(topic, "topic_id"):
        return {"topic_id": topic.topic_id}
    return {"topic": topic.topic}


def each_partition(topic: Any, partition: Any, asked: Any, **fields: Any) -> tuple[Any, ...]:
    """An answer (``topic`` and ``partition`` classes, ``fields`` set) for every partition of
    the topics ``asked`` names (by ``partitions`` or ``partition_indexes``)."""
    return tuple(
        topic(
            name=t.name,
            partitions=tuple(
                partition(partition_index=getattr(p, "partition_index", p), **fields)
                for p in getattr(t, "partitions", None) or t.partition_indexes
            ),
        )
        for t in asked or ()
    )


def committed_answer(m: Any, request: Any, offset: int = -1) -> Any:
    """An answer to OffsetFetch giving ``offset`` (-1: nothing committed) for every
    partition asked."""
    if hasattr(request, "groups"):  # v8+: batched by group
        groups = tuple(
            m.OffsetFetchResponseGroup(
                group_id=g.group_id,
                topics=each_partition(
                    m.OffsetFetchResponseTopics,
                    m.OffsetFetchResponsePartitions,
                    g.topics,
                    committed_offset=offset,
                ),
            )
            for g in request.groups
        )
        return m.OffsetFetchResponse(groups=groups)
    answers = each_partition(
        m.OffsetFetchResponseTopic,
        m.OffsetFetchResponsePartition,
        request.topics,
        committed_offset=offset,
    )
    return m.OffsetFetchResponse(topics=answers)


def coordinator_answer(m: Any, request: Any, node: int) -> Any:
    """An answer to FindCoordinator naming broker ``node``."""
    return m.FindCoordinatorResponse(
        coordinators=(m.Coordinator(key=request.coordinator_keys[0], node_id=node),)
    )


class LogLeader:
    """The fake leader (see the module doc); ``fetched`` lists the (partition, fetch offset)
    of every Fetch it answered."""

    def __init__(
        self,
        logs: dict[int, list[bytes]],
        *,
        committed: int = -1,
        from_any_offset: bool = False,
        extra_partition: int | None = None,
    ) -> None:
        self.logs = logs
        self.committed = committed
        self.from_any_offset = from_any_offset
        self.extra_partition = extra_partition
        self.holds: dict[int, asyncio.Event] = {}
        self._asked: defaultdict[int, asyncio.Event] = defaultdict(asyncio.Event)
        self.fetched: list[tuple[int, int]] = []

    def asked(self, api_key: int) -> asyncio.Event:
        return self._asked[api_key]

    def end(self, partition: int) -> int:
        return max((_end(b) for b in self.logs.get(partition, ())), default=0)

    def records_from(self, partition: int, offset: int) -> bytes:
        """The batches a broker sends from ``offset`` on: those with a record at or past it."""
        log = self.logs.get(partition, [])
        return b"".join(b for b in log if self.from_any_offset or _end(b) > offset)

    async def __call__(self, node: int, client: FakeClient, header: Any, request: Any) -> Any:
        key = header.request_api_key
        self._asked[key].set()
        if key in self.holds:
            await self.holds[key].wait()
        m = messages(key, header.request_api_version)
        if key == FETCH:
            return await self._fetch(m, request)
        if key == LIST_OFFSETS:
            return m.ListOffsetsResponse(
                topics=tuple(
                    m.ListOffsetsTopicResponse(
                        name=t.name,
                        partitions=tuple(
                            m.ListOffsetsPartitionResponse(
                                partition_index=p.partition_index,
                                offset=0 if p.timestamp == -2 else self.end(p.partition_index),
                            )
                            for p in t.partitions
                        ),
                    )
                    for t in request.topics
                )
            )
        if key == FIND_COORDINATOR:
            return coordinator_answer(m, request, node)
        if key == OFFSET_FETCH:
            return committed_answer(m, request, self.committed)
        return None

    async def _fetch(self, m: Any, request: Any) -> Any:
        asked = [(t, p.partition, p.fetch_offset) for t in request.topics for p in t.partitions]
        self.fetched += [(p, offset) for _, p, offset in asked]
        answers = [(t, p, self.records_from(p, offset)) for t, p, offset in asked]
        if not any(records for *_, records in answers):
            await asyncio.sleep(min(request.max_wait_ms, 50) / 1000)  # a short long poll
        topics = [
            m.FetchableTopicResponse(
                **same_topic(t),
                partitions=(
                    m.PartitionData(
                        partition_index=p, high_watermark=self.end(p), records=records or None
                    ),
                ),
            )
            for t, p, records in answers
        ]
        if self.extra_partition is not None and request.topics:
            extra = m.PartitionData(partition_index=self.extra_partition, high_watermark=0)
            topics.append(
                m.FetchableTopicResponse(**same_topic(request.topics[0]), partitions=(extra,))
            )
        return m.FetchResponse(responses=tuple(topics))


def _end(data: bytes) -> int:
    """The offset after a batch, by its header and by its records (a crafted header may be
    wrong)."""
    (read,) = decode_batches(data, check_crcs=False, max_decompressed_size=1 << 30)
    return max(read.next_offset, *(r.offset + 1 for r in read.records))
