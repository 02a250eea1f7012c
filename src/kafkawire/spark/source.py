"""The data source Spark finds as format "kafkawire", and its batch and stream readers.

Spark calls the readers' planning methods (``partitions``, ``initialOffset``, ``latestOffset``)
on the driver, in a Python process it keeps per query, and ``read`` on executors, with pickled
copies of the reader. So a reader holds only its parsed options and plain offsets, and each
call that talks to Kafka runs on its process's event loop with the client that process keeps
(:mod:`.worker`: one per brokers and security settings, kept between calls).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

try:  # PySpark 4.1+: the minimum of minOffsetsPerTrigger, as Spark's Kafka source reports it
    from pyspark.sql.streaming.datasource import ReadMinRows
except ImportError:  # pragma: no cover - older PySpark: the reader applies it all the same
    ReadMinRows = None  # type: ignore[assignment,misc]

from kafkawire.client import KafkaClient

from .arrow import read_schema
from .offsets import (
    UNRESOLVED_START,
    Bounds,
    OffsetRange,
    Offsets,
    current_bounds,
    from_json,
    next_end,
    split,
    starting_offsets,
    to_json,
)
from .options import EARLIEST, OptionError, ReadOptions, read_options, write_options
from .reading import read_range
from .transactional import ExactlyOnceStreamWriter, check_transactions_served
from .worker import run_with_client
from .writing import ArrowWriter, StreamArrowWriter, check_write_schema

__all__ = ["KafkawireDataSource"]

Bounded = dict[Any, Bounds]


class KafkawireDataSource(DataSource):
    """``spark.read.format("kafkawire")`` and friends: Kafka through kafkawire, no JVM package.

    The options are those of Spark's Kafka source (docs/guide/spark.md); the read schema is its
    schema, with ``headers`` when ``includeHeaders`` is true.
    """

    @classmethod
    def name(cls) -> str:
        """The format's name: ``"kafkawire"``."""
        return "kafkawire"

    def schema(self) -> str:
        """The read schema of Spark's Kafka source, with ``headers`` when ``includeHeaders`` is
        true."""
        include = str(self.options.get("includeHeaders", "false")).lower() == "true"
        return read_schema(include)

    def reader(self, schema: StructType) -> DataSourceReader:
        """A batch read (``spark.read``): the offset ranges to read, one or more tasks per
        partition."""
        return BatchReader(read_options(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """A streaming read (``spark.readStream``), its offsets kept in the query's checkpoint."""
        return StreamReader(read_options(self.options, streaming=True))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """A batch write (``df.write``, at least once); ``exactlyOnce`` is refused here."""
        options = write_options(self.options)
        check_write_schema(schema, options, overwrite)
        if options.exactly_once:
            raise OptionError(
                "exactlyOnce is for streaming writes (writeStream), whose batches Spark may "
                "run again; a batch write is at least once"
            )
        return ArrowWriter(options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """A streaming write: at least once, or in transactions with ``exactlyOnce``."""
        options = write_options(self.options)
        check_write_schema(schema, options, overwrite=False)
        if options.exactly_once:
            check_transactions_served(options)
            return ExactlyOnceStreamWriter(options)
        return StreamArrowWriter(options)


def _ranges(start: Offsets, end: Offsets, options: ReadOptions) -> list[InputPartition]:
    ranges = []
    for tp, offset in sorted(end.items()):
        first = start.get(tp, EARLIEST)
        if first > offset and not options.fail_on_data_loss:
            first = EARLIEST  # the log was replaced: read the new one (read_range raises else)
        ranges.append(OffsetRange(tp.topic, tp.partition, first, offset))
    pieces = split(ranges, options.min_partitions, options.max_records_per_partition)
    return [InputPartition(piece) for piece in pieces]


def _read(options: ReadOptions, partition: InputPartition) -> Iterator[Any]:
    # Spark runs one task with no value when partitions() returns none (a pattern that
    # matches no topic): it reads nothing.
    return iter(()) if partition.value is None else read_range(options, partition.value)


class BatchReader(DataSourceReader):
    def __init__(self, options: ReadOptions) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        options = self.options

        async def plan(client: KafkaClient) -> tuple[Offsets, Offsets]:
            bounds = await current_bounds(client, options, must_exist=True)
            start = await starting_offsets(client, options.starting, bounds)
            return start, await starting_offsets(client, options.ending, bounds)

        start, end = run_with_client(options, plan)
        return _ranges(start, end, options)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return _read(self.options, partition)


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets are ``{topic: {"partition": offset}}``: the next offset to read of each.

    ``commit`` and ``stop`` do nothing: Spark's checkpoint holds the offsets, and Spark does not
    call either reliably (``commit`` lags a batch and never comes for the last one). Batch 0
    reads nothing: its end is where the stream starts (``initialOffset``).

    Admission control, as Spark's Kafka source does it: ``maxOffsetsPerTrigger`` caps a batch;
    with ``minOffsetsPerTrigger`` no batch starts until that many records wait, or until
    ``maxTriggerDelay`` has passed since the last batch (the first comes at once); a
    ``trigger(availableNow=True)`` run ignores the minimum, as Spark's does.
    """

    def __init__(self, options: ReadOptions, clock: Callable[[], float] = time.monotonic) -> None:
        self.options = options
        self._target: Offsets | None = None  # the end of a trigger(availableNow=True) run
        self._clock = clock
        self._last_trigger = float("-inf")  # when the last batch was let through

    def _bounds(self) -> Bounded:
        options = self.options
        return run_with_client(options, lambda client: current_bounds(client, options))

    def initialOffset(self) -> dict[str, Any]:
        """Always :data:`UNRESOLVED_START`. Spark asks for it when it plans batch 0, again when
        it runs it, and again when a restart runs batch 0 once more, so an answer that moves
        ("latest", or the options of the restart) would move batch 0's start: records skipped,
        or read that were not asked for. ``latestOffset`` resolves the starting offsets
        instead, and batch 0 reads nothing and keeps them in the checkpoint as its end (Spark's
        Kafka source keeps them in the checkpoint too; a Python source has no place there)."""
        return UNRESOLVED_START

    def _starting_offsets(self) -> dict[str, Any]:
        options = self.options

        async def initial(client: KafkaClient) -> Offsets:
            bounds = await current_bounds(client, options, must_exist=True)
            return await starting_offsets(client, options.starting, bounds)

        return to_json(run_with_client(options, initial))

    def getDefaultReadLimit(self) -> ReadLimit:
        least, most = self.options.min_offsets_per_trigger, self.options.max_offsets_per_trigger
        if least is not None and ReadMinRows is not None:
            return ReadMinRows(least)  # the maximum, if any, is applied from the options
        return ReadAllAvailable() if most is None else ReadMaxRows(most)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = {tp: b.latest for tp, b in self._bounds().items()}

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        if start == UNRESOLVED_START:
            return self._starting_offsets()  # batch 0's end (initialOffset)
        begin = from_json(start)
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        if ReadMinRows is not None and isinstance(limit, ReadMinRows):
            max_rows = self.options.max_offsets_per_trigger
        bounds = self._bounds()
        if self._target is None and self._waits_for_more(begin, bounds):
            return start
        end = next_end(begin, bounds, self._target, max_rows, self.options)
        return start if end == begin else to_json(end)

    def _waits_for_more(self, begin: Offsets, bounds: Bounded) -> bool:
        """Whether fewer than minOffsetsPerTrigger records wait and maxTriggerDelay has not
        passed since the last batch (Spark's ``KafkaMicroBatchStream.delayBatch``)."""
        least = self.options.min_offsets_per_trigger
        if least is None:
            return False
        now = self._clock()
        if now - self._last_trigger < self.options.max_trigger_delay_ms / 1000:
            waiting = sum(b.latest - begin.get(tp, b.earliest) for tp, b in bounds.items())
            if waiting < least:
                return True
        self._last_trigger = now
        return False

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        if start == UNRESOLVED_START:
            return []  # batch 0 reads nothing: it records where the stream starts
        return _ranges(from_json(start), from_json(end), self.options)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return _read(self.options, partition)
