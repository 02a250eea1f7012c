"""Fetch (v4-18): records from the leader, in sessions, with epochs, waiting for data.

Per partition, as Kafka's ``Partition.fetchRecords`` reads for a consumer: the topic (by name,
by id from v13: UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID); the leader epoch the client
knows and whether this broker leads (:func:`~.common.leader_check`); with a last fetched epoch
(v12+), the end of that epoch in this log: if the epoch is unknown here or ends before the
fetch offset, the answer is a *diverging epoch* and no records (OFFSET_OUT_OF_RANGE when the
epoch's end cannot be found or the offset is before the log start); then the records from the
fetch offset (OFFSET_OUT_OF_RANGE outside [log start, log end]) up to the high watermark, or
at read_committed up to the last stable offset with the aborted transactions they overlap.

Byte limits (KIP-74): each partition reads at most its ``partition_max_bytes`` and what is
left of ``max_bytes``; until some partition has returned data, the first batch comes whole
however large. Sessions: :mod:`~kafkawire.testing.fake.fetch_sessions`.

Long poll: with fewer than ``min_bytes`` to return, no error and no diverging epoch, the
answer waits for new data (or a leader change, a truncation, ...) up to ``max_wait_ms``.
From v16 an answer naming a stale leader (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH)
carries the current leader and its endpoint (KIP-951).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

from kafkawire.testing.fake.build import build, has, nested, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.fetch_sessions import (
    Answered,
    CachedPartition,
    FetchContext,
    PartitionKey,
)
from kafkawire.testing.fake.log import AbortedTxn
from kafkawire.testing.fake.state import ClusterState, Partition

from .common import (
    HINTED_ERRORS,
    leader_check,
    leader_hint,
    node_endpoints,
    response_for,
    unknown_topic,
)

__all__ = ["handle"]

_FIRST_BY_ID = 13
_READ_COMMITTED = 1
_NO_LIMIT = 2**31 - 1


@dataclass
class PartitionRead:
    cached: CachedPartition
    error: Error
    partition: Partition | None = None
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: bytes = b""
    aborted: list[AbortedTxn] | None = None
    diverging: tuple[int, int] | None = None

    @property
    def answered(self) -> Answered:
        return Answered(
            error=self.error,
            has_records=bool(self.records),
            high_watermark=self.high_watermark,
            last_stable_offset=self.last_stable_offset,
            log_start_offset=self.log_start_offset,
            diverging=self.diverging is not None,
        )


async def handle(call: Call) -> Any:
    request = call.request
    cls = response_for(call)
    by_id = call.version >= _FIRST_BY_ID
    cache = call.services.fetch_sessions[call.node_id]
    context = cache.context(
        getattr(request, "session_id", 0),  # before v7: no sessions
        getattr(request, "session_epoch", -1),
        _asked(request, by_id),
        _forgotten(request, by_id),
        uses_topic_ids=by_id,
    )
    if context.error is not Error.NONE:
        return build(cls, error_code=context.error, session_id=0, responses=())
    reads = await _read_when_ready(call, context, by_id)
    session_id, named = context.answer(cache, [r.answered for r in reads], uses_topic_ids=by_id)
    return _response(call, cls, session_id, [reads[i] for i in named], by_id)


def _asked(request: Any, by_id: bool) -> list[CachedPartition]:
    return [
        CachedPartition(
            topic=topic.topic_id if by_id else topic.topic,
            partition=p.partition,
            fetch_offset=p.fetch_offset,
            max_bytes=p.partition_max_bytes,
            current_leader_epoch=getattr(p, "current_leader_epoch", -1),
            last_fetched_epoch=getattr(p, "last_fetched_epoch", -1),
        )
        for topic in request.topics
        for p in topic.partitions
    ]


def _forgotten(request: Any, by_id: bool) -> list[PartitionKey]:
    return [
        (topic.topic_id if by_id else topic.topic, p)
        for topic in getattr(request, "forgotten_topics_data", ())
        for p in topic.partitions
    ]


async def _read_when_ready(call: Call, context: FetchContext, by_id: bool) -> list[PartitionRead]:
    """Read every partition of the fetch, again after each change until the answer is due."""
    request = call.request
    state = call.state
    loop = asyncio.get_running_loop()
    deadline = loop.time() + request.max_wait_ms / 1000
    while True:
        reads = _read_all(state, call.node_id, context.partitions, request, by_id)
        ready = (
            request.max_wait_ms <= 0
            or not reads
            or sum(len(r.records) for r in reads) >= request.min_bytes
            or any(r.error is not Error.NONE or r.diverging is not None for r in reads)
        )
        left = deadline - loop.time()
        if ready or left <= 0:
            return reads
        await state.changes.wait(left)


def _read_all(
    state: ClusterState, node_id: int, partitions: list[CachedPartition], request: Any, by_id: bool
) -> list[PartitionRead]:
    read_committed = getattr(request, "isolation_level", 0) == _READ_COMMITTED
    left = getattr(request, "max_bytes", _NO_LIMIT)
    min_one = True
    reads = []
    for cached in partitions:
        read = _read(
            state,
            node_id,
            cached,
            limit=min(cached.max_bytes, left),
            min_one=min_one,
            read_committed=read_committed,
            by_id=by_id,
        )
        if read.records:
            min_one = False
            left = max(0, left - len(read.records))
        reads.append(read)
    return reads


def _read(
    state: ClusterState,
    node_id: int,
    cached: CachedPartition,
    *,
    limit: int,
    min_one: bool,
    read_committed: bool,
    by_id: bool,
) -> PartitionRead:
    if by_id:
        topic = state.by_id.get(cached.topic) if isinstance(cached.topic, uuid.UUID) else None
    else:
        topic = state.by_name.get(str(cached.topic))
    if topic is None:
        return PartitionRead(cached, unknown_topic(by_id))
    partition = state.partition(topic.name, cached.partition)
    if partition is None:
        return PartitionRead(cached, Error.UNKNOWN_TOPIC_OR_PARTITION)
    error = leader_check(partition, node_id, cached.current_leader_epoch)
    if error is not Error.NONE:
        return PartitionRead(cached, error, partition)
    log = partition.log
    read = PartitionRead(
        cached,
        Error.NONE,
        partition,
        high_watermark=log.high_watermark,
        last_stable_offset=log.last_stable_offset,
        log_start_offset=log.log_start_offset,
        aborted=[] if read_committed else None,
    )
    offset = cached.fetch_offset
    if cached.last_fetched_epoch >= 0:
        epoch, end = log.end_offset_for(cached.last_fetched_epoch)
        if epoch < 0 or end < 0 or offset < log.log_start_offset:
            return PartitionRead(cached, Error.OFFSET_OUT_OF_RANGE, partition)
        if epoch < cached.last_fetched_epoch or end < offset:
            read.diverging = (epoch, end)
            return read
    if not log.log_start_offset <= offset <= log.end_offset:
        return PartitionRead(cached, Error.OFFSET_OUT_OF_RANGE, partition)
    upper = log.last_stable_offset if read_committed else log.high_watermark
    read.records, after = log.read(offset, limit, upper, min_one=min_one)
    if read_committed:
        read.aborted = log.aborted_between(offset, after)
    return read


def _response(
    call: Call, cls: type[Any], session_id: int, reads: list[PartitionRead], by_id: bool
) -> Any:
    topic_cls = part(cls, "responses")
    partition_cls = part(topic_cls, "partitions")
    aborted_cls = part(partition_cls, "aborted_transactions")
    hints = has(cls, "node_endpoints")
    hinted: set[int] = set()
    topics: list[tuple[Any, list[Any]]] = []
    for read in reads:
        error = read.error
        if hints and error in HINTED_ERRORS and read.partition is not None:
            hinted.add(read.partition.leader)
        answer = build(
            partition_cls,
            partition_index=read.cached.partition,
            error_code=error,
            high_watermark=read.high_watermark,
            last_stable_offset=read.last_stable_offset,
            log_start_offset=read.log_start_offset,
            diverging_epoch=nested(partition_cls, "diverging_epoch")
            if read.diverging is None
            else nested(
                partition_cls,
                "diverging_epoch",
                epoch=read.diverging[0],
                end_offset=read.diverging[1],
            ),
            current_leader=leader_hint(partition_cls, read.partition if hints else None, error),
            aborted_transactions=None
            if read.aborted is None
            else tuple(
                build(aborted_cls, producer_id=t.producer_id, first_offset=t.first_offset)
                for t in read.aborted
            ),
            preferred_read_replica=-1,
            records=read.records,
        )
        # Consecutive partitions of one topic share its entry, as Kafka writes them.
        if topics and topics[-1][0] == read.cached.topic:
            topics[-1][1].append(answer)
        else:
            topics.append((read.cached.topic, [answer]))
    return build(
        cls,
        error_code=Error.NONE,
        session_id=session_id,
        responses=tuple(
            build(
                topic_cls,
                **({"topic_id": topic} if by_id else {"topic": topic}),
                partitions=tuple(answers),
            )
            for topic, answers in topics
        ),
        node_endpoints=node_endpoints(cls, call.state, hinted) if hints else (),
    )
