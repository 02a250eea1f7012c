"""What a Spark task runs to read one offset range: fetches on the process's loop, one ahead.

Readers are pickled from the planner to Spark's Python workers, so nothing asyncio lives on
them: a task leases its process's client (:mod:`.worker`: kept between tasks and micro-batches)
and pages through its range with ``KafkaClient.fetch_partition``, one Arrow batch per fetch,
its columns filled from the fetched batches' bytes (:mod:`kafkawire.records.arrow_columns`: a
C loop per batch, no Python object per record). Each page is fetched and built on the loop
while the task's thread hands Spark the page before it: the next fetch starts before a batch
is yielded, as the Java consumer fetches ahead while records are processed. What a fetch's
rows are is what ``KafkaClient.fetch`` returns: control batches never, aborted transactions'
records not when the broker lists them. No consumer group is involved: Spark's checkpoint
holds the offsets.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

from kafkawire.client import EARLIEST as LIST_EARLIEST
from kafkawire.client import KafkaClient
from kafkawire.records.arrow_columns import RecordColumns, add_fetched

from .arrow import to_batch
from .offsets import DataLossError, OffsetRange, data_lost
from .options import ReadOptions
from .worker import leased_client, worker_loop

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
    worker = worker_loop()
    with leased_client(options) as client:
        pages = _Pages(client, options, wanted)
        upcoming: Future[Any] | None = worker.submit(pages.next())
        try:
            while upcoming is not None:
                batch = upcoming.result()
                upcoming = None if pages.done else worker.submit(pages.next())
                if batch is not None:
                    yield batch
        finally:
            if upcoming is not None:  # Spark stopped early: the lease closes the client
                upcoming.cancel()


class _Pages:
    """The pages of one range, fetched one after the other on the loop."""

    def __init__(self, client: KafkaClient, options: ReadOptions, wanted: OffsetRange) -> None:
        self._client = client
        self._options = options
        self._wanted = wanted
        self._columns = RecordColumns(options.include_headers)
        self._offset: int | None = None  # where the next fetch starts, once known
        self.done = False

    async def next(self) -> Any | None:
        """The next fetch's rows as an Arrow batch (``None``: it had none); ``done`` once the
        range is read, or the log ended before it (data loss: raised, or logged)."""
        wanted = self._wanted
        if self._offset is None:
            self._offset = await _first_offset(self._client, self._options, wanted)
        offset = self._offset
        if offset >= wanted.end:
            self.done = True
            return None
        answer = await self._client.fetch_partition(
            wanted.topic,
            wanted.partition,
            offset,
            max_wait_ms=_FETCH_WAIT_MS,
            partition_max_bytes=_FETCH_BYTES,
        )
        aborted = getattr(answer, "aborted_transactions", None)
        columns = self._columns
        self._offset = add_fetched(
            columns, answer.records or b"", aborted, start=offset, end=wanted.end
        )
        if self._offset == offset and answer.high_watermark <= offset:
            self.done = True
            _lost(self._options, wanted, f"the log ends at {answer.high_watermark}")
            return None
        self.done = self._offset >= wanted.end
        if not len(columns):
            return None
        return to_batch(
            wanted.topic, wanted.partition, columns.finish(), self._options.include_headers
        )


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
