"""Writes: each Spark task produces its rows with an idempotent kafkawire producer.

A task sends each Arrow batch Spark hands it with ``Producer.send_batch`` (one call per
topic, the columns read in place), and reports success only after ``flush`` and after every
record's delivery came back acknowledged; the first failed delivery fails the task with its
error, so Spark retries or aborts the job. Records a failed task did write stay in Kafka:
like Spark's own Kafka sink, a write is at least once (a retried task or a re-run streaming
batch writes its rows again).

The producer is its Python process's (:mod:`.worker`: kept between tasks and micro-batches,
closed if a task using it fails), on the process's event loop: the task's thread reads each
batch from Spark and queues it there (:class:`Sending`), so the loop goes on sending the
batches before it while the thread waits for Spark's next.
A streaming write with ``exactlyOnce=true`` runs in transactions instead
(:mod:`.transactional`), with the same sending steps (:func:`send_all`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    StringType,
    StructType,
)

from kafkawire.producer import BatchDelivery, Producer

from .options import OptionError, WriteOptions
from .worker import leased_producer, worker_loop

__all__ = [
    "ArrowWriter",
    "Sending",
    "StreamArrowWriter",
    "Written",
    "check_write_schema",
    "send_all",
]

_BYTES_OR_TEXT = (BinaryType, StringType)


@dataclass(frozen=True)
class Written(WriterCommitMessage):
    """What one task acknowledged: how many records the brokers took."""

    records: int


def check_write_schema(schema: StructType, options: WriteOptions, overwrite: bool) -> None:
    """Refuse, on the driver and naming the column, what no task could write."""
    if overwrite:
        raise OptionError('Kafka topics can only be appended to: write with .mode("append")')
    types = {field.name: field.dataType for field in schema.fields}
    if "value" not in types:
        raise OptionError("a write needs a value column (binary or string)")
    if options.topic is None and "topic" not in types:
        raise OptionError("a write needs a topic: a topic column or the option topic")
    expected: dict[str, tuple[type[DataType], ...]] = {
        "key": _BYTES_OR_TEXT,
        "value": _BYTES_OR_TEXT,
        "topic": (StringType,),
        "partition": (IntegerType,),
    }
    for name, kinds in expected.items():
        if name in types and not isinstance(types[name], kinds):
            wanted = " or ".join(k.typeName() for k in kinds)
            raise OptionError(f"the column {name} must be {wanted}, not {types[name].typeName()}")
    headers = types.get("headers")
    if headers is not None and not (
        isinstance(headers, ArrayType)
        and isinstance(headers.elementType, StructType)
        and [(f.name, type(f.dataType)) for f in headers.elementType.fields]
        == [("key", StringType), ("value", BinaryType)]
    ):
        raise OptionError("the column headers must be array<struct<key: string, value: binary>>")


class _Producing:
    """The batch and the stream writer alike: the process's producer, on its loop."""

    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> Written:
        worker = worker_loop()
        with leased_producer(self.options) as producer:
            sending = Sending(producer, self.options)
            for batch in iterator:  # Spark's next batch is read while the loop sends
                worker.run(sending.add(batch))
            return Written(worker.run(sending.finish()))


class ArrowWriter(_Producing, DataSourceArrowWriter):
    pass


class StreamArrowWriter(_Producing, DataSourceStreamArrowWriter):
    """At least once: a batch that is re-run after a restart is written again."""


async def send_all(producer: Producer, options: WriteOptions, batches: Iterator[Any]) -> int:
    """Send every row of the Arrow ``batches`` in step (:class:`Sending`), flush, and check
    every delivery; the number of rows. The first failed delivery raises (a
    :class:`SendBatchError` naming each row's error, caused by the first)."""
    sending = Sending(producer, options, in_step=True)
    for batch in batches:
        await sending.add(batch)
    return await sending.finish()


class Sending:
    """One task's rows through ``producer``: :meth:`add` each Arrow batch, then :meth:`finish`.

    Each Arrow batch goes in one send_batch per topic, its columns read in place. No batch
    waits for the deliveries of those before it: those done are checked at each batch (a
    failure fails the task there), and the producer's ``buffer_memory`` holds rows back when
    the brokers fall behind. Waiting made the task's thread wait a round trip a batch, during
    which Spark's next batch could not be read. ``in_step`` (a transaction's task): each
    batch's deliveries are awaited once the next is queued, as before, so that a failing
    task's batches but the last two before its failure have reached the brokers (what
    tests/spark/test_exactly_once.py shows its aborted transaction keeps invisible).
    """

    def __init__(self, producer: Producer, options: WriteOptions, *, in_step: bool = False) -> None:
        self._producer = producer
        self._topic = options.topic
        self._in_step = in_step
        self._pending: list[BatchDelivery] = []
        self._written = 0

    async def add(self, batch: Any) -> None:
        """Queue the rows of ``batch``; raise what failed a delivery of a batch before."""
        self._check_done()
        producer = self._producer
        queued = [
            await producer.send_batch(topic, **columns)
            for topic, columns in _by_topic(batch, self._topic)
        ]
        if self._in_step:
            await _acknowledged(self._pending)
            self._pending = queued
        else:
            self._pending += queued
        self._written += batch.num_rows

    async def finish(self) -> int:
        """Flush, check every delivery; the number of rows sent."""
        await self._producer.flush()
        await _acknowledged(self._pending)
        return self._written

    def _check_done(self) -> None:
        waiting = []
        for delivery in self._pending:
            if delivery.done():
                delivery.result()  # raises what stopped a record
            else:
                waiting.append(delivery)
        self._pending = waiting


async def _acknowledged(deliveries: list[BatchDelivery]) -> None:
    for delivery in deliveries:
        await delivery  # raises what stopped a record: the task fails with it


def _by_topic(batch: Any, topic: str | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(topic, send_batch's arguments) for the rows of each topic of an Arrow batch; the
    topic option overrides the column, as in Spark's Kafka sink."""
    if topic is not None:
        yield topic, _columns(batch)
        return
    import pyarrow.compute as pc

    topics = batch.column("topic")
    if topics.null_count:
        row = topics.is_null().to_pylist().index(True)
        raise ValueError(f"row {row} of a batch has no topic (the topic column is null)")
    for name in pc.unique(topics).to_pylist():
        yield name, _columns(batch.filter(pc.equal(topics, name)))


def _columns(batch: Any) -> dict[str, Any]:
    """send_batch's columns of an Arrow batch: value, key and partition as they are, headers
    (an array of key and value structs per row) as lists of pairs."""
    names = batch.schema.names
    columns: dict[str, Any] = {"values": batch.column("value")}
    if "key" in names:
        columns["keys"] = batch.column("key")
    if "partition" in names:
        columns["partition"] = batch.column("partition")
    if "headers" in names:
        columns["headers"] = [
            [(h["key"], h["value"]) for h in row] if row else None
            for row in batch.column("headers").to_pylist()
        ]
    return columns
