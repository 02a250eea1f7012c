"""What a Spark task runs to read one offset range: fetches in a fresh event loop.

Readers are pickled from the planner to Spark's Python workers, so nothing asyncio lives on
them: each task opens its own client in its own event loop, pages through its range with
``KafkaClient.fetch_partition`` and yields one Arrow batch per fetch, its columns filled from
the fetched batches' bytes (:mod:`kafkawire.records.arrow_columns`: a C loop per batch, no
Python object per record). What a fetch's rows are is what ``KafkaClient.fetch`` returns:
control batches never, aborted transactions' records not when the broker lists them. No
consumer group is involved: Spark's checkpoint holds the offsets.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from kafkawire.client import EARLIEST as LIST_EARLIEST
from kafkawire.client import KafkaClient
from kafkawire.records.arrow_columns import RecordColumns, add_fetched

from .arrow import to_batch
from .offsets import DataLossError, OffsetRange, data_lost
from .options import ReadOptions

__all__ = ["read_range"]

_FETCH_WAIT_MS = 100  # a partition behind its high watermark answers at once anyway
# Four times the Java consumer's max.partition.fetch.bytes: a task reads one partition, so
# fewer, larger fetches (a quarter of the round trips, Arrow batches of ~40,000 rows of 100
# bytes) cost nothing in parallelism; benchmarks/bench_spark.py's task code read 1.2-2x
# faster than at 1 MiB.
_FETCH_BYTES = 4 * 1024 * 1024


def read_range(options: ReadOptions, wanted: OffsetRange) -> Iterator[Any]:
    """The records ``[start, end)`` of one partition, as Arrow record batches."""
    if wanted.end < wanted.start:
        # Spark does not check that a batch's end is past its start; Kafka's offsets only grow.
        raise DataLossError(
            f"{wanted.topic}/{wanted.partition}: end offset {wanted.end} is below the start"
            f" offset {wanted.start}; was the topic deleted and created again?"
        )
    loop = asyncio.new_event_loop()
    client = KafkaClient(options.bootstrap, **options.client_options())
    try:
        loop.run_until_complete(client.__aenter__())
        offset = loop.run_until_complete(_first_offset(client, options, wanted))
        columns = RecordColumns(options.include_headers)
        while offset < wanted.end:
            answer = loop.run_until_complete(
                client.fetch_partition(
                    wanted.topic,
                    wanted.partition,
                    offset,
                    max_wait_ms=_FETCH_WAIT_MS,
                    partition_max_bytes=_FETCH_BYTES,
                )
            )
            aborted = getattr(answer, "aborted_transactions", None)
            next_offset = add_fetched(
                columns, answer.records or b"", aborted, start=offset, end=wanted.end
            )
            if len(columns):
                yield to_batch(
                    wanted.topic, wanted.partition, columns.finish(), options.include_headers
                )
            if next_offset == offset and answer.high_watermark <= offset:
                _lost(options, wanted, f"the log ends at {answer.high_watermark}")
                return
            offset = next_offset
    finally:
        loop.run_until_complete(client.close())
        loop.close()


async def _first_offset(client: KafkaClient, options: ReadOptions, wanted: OffsetRange) -> int:
    """``wanted.start``, or the first offset kept when that is gone and data loss is allowed."""
    first = (await client.list_offsets(wanted.topic, wanted.partition, LIST_EARLIEST)).offset
    if wanted.start >= first:
        return wanted.start
    if wanted.start >= 0:  # not EARLIEST: records were wanted that are no longer there
        _lost(options, wanted, f"its first offset is now {first}")
    return first


def _lost(options: ReadOptions, wanted: OffsetRange, why: str) -> None:
    message = (
        f"{wanted.topic}/{wanted.partition}: offsets {wanted.start}-{wanted.end - 1} were"
        f" to be read, but {why}"
    )
    data_lost(options, message, "reading on")
