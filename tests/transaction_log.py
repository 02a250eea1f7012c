"""A partition's log with its transaction markers, and what read_committed makes of it.

Neither embedded broker lists aborted transactions in Fetch (and the mock cluster's last stable
offset is its high watermark), so a read_committed consumer cannot be shown there. Both write
the COMMIT and ABORT markers right, though: :func:`read_committed` works out from them what a
broker that follows Kafka would list (each aborted transaction's producer and first offset, and
the last stable offset: the first offset of a transaction still open) and runs the consumer's
own filter (:class:`~kafkawire.records.ReadCommittedFilter`) over the log with it.
"""

from __future__ import annotations

from typing import Any

from kafkawire.client import KafkaClient
from kafkawire.messages.fetch import v11 as fetch
from kafkawire.records import (
    AbortedTransaction,
    ControlType,
    ReadCommittedFilter,
    control_type,
    decode_batches,
)

__all__ = ["markers", "raw_log", "read_committed"]


async def raw_log(bootstrap: str, topic: str, partition: int = 0) -> list[Any]:
    """Every batch of the partition, control batches included, read one fetch at a time.

    The crcs are not checked: librdkafka's mock cluster writes control batches with crc 0.
    """
    batches: list[Any] = []
    async with KafkaClient(bootstrap) as client:
        leader = (await client.cluster.metadata([topic])).leader_for(topic, partition)
        offset = 0
        while True:
            wanted = fetch.FetchPartition(
                partition=partition, fetch_offset=offset, partition_max_bytes=1 << 20
            )
            request = fetch.FetchRequest(
                max_wait_ms=10, topics=(fetch.FetchTopic(topic=topic, partitions=(wanted,)),)
            )
            data = (await client.cluster.send(request, node_id=leader)).responses[0].partitions[0]
            found = list(decode_batches(data.records or b"", check_crcs=False))
            if not found:
                return batches
            batches += found
            offset = found[-1].next_offset


def markers(batches: list[Any]) -> list[Any]:
    """The data values and transaction markers of a transactional log, in order."""
    seen: list[Any] = []
    for batch in batches:
        for record in batch.records:
            if batch.is_control:
                seen.append(control_type(record))
            else:
                assert batch.is_transactional
                seen.append(record.value)
    return seen


def read_committed(batches: list[Any]) -> list[Any]:
    """The records a read_committed consumer gets from ``batches`` (a whole partition)."""
    aborted: list[AbortedTransaction] = []
    first_of_open: dict[int, int] = {}  # producer id -> first offset of its open transaction
    for batch in batches:
        if not batch.is_transactional:
            continue
        if batch.is_control:
            first = first_of_open.pop(batch.producer_id, None)
            if first is not None and control_type(batch.records[0]) is ControlType.ABORT:
                aborted.append(AbortedTransaction(batch.producer_id, first))
        else:
            first_of_open.setdefault(batch.producer_id, batch.base_offset)
    last_stable = min(first_of_open.values(), default=None)
    visible = ReadCommittedFilter(aborted)
    return [
        record
        for batch in batches
        if (last_stable is None or batch.base_offset < last_stable) and visible.accepts(batch)
        for record in batch.records
    ]
