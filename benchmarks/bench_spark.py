"""Spark through kafkawire against the raw kafkawire client and producer, in one run.

Writes RECORDS records of 100 bytes to a two-partition topic on the embedded Tansu broker with
the raw producer, then the same number through ``df.write.format("kafkawire")``; reads them
back with ``KafkaClient.records`` and through ``spark.read.format("kafkawire")`` (every column
materialized by Spark's ``noop`` sink). Between the two, the data source's task code runs
without Spark, in this process, one partition after the other (``read_range`` and the writer
fed Arrow batches of 10,000 rows): the gap to the raw client is the data source's own cost
(Arrow conversion), the gap to Spark is Spark's (Python workers, Arrow to the JVM, scheduling).
Prints rows/s and Spark's ratio to the raw client. The Spark figures include planning and
scheduling the job; the session's start-up is excluded.

Exactly once against at least once: the task code writing all records in one transaction
(prepared, then committed as the driver does), and a streaming query that copies the records
from topic to topic through kafkawire in batches of STREAM_BATCH records (trigger
availableNow), once with each kind of write. Tansu serves the transactions the writer needs.
Set KAFKAWIRE_BENCH_SPARK_RECORDS to change the count (default 1,000,000).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from kafkawire.client import KafkaClient
from kafkawire.producer import Producer
from kafkawire.spark.offsets import OffsetRange
from kafkawire.spark.options import read_options, write_options
from kafkawire.spark.reading import read_range
from kafkawire.spark.transactional import TaskTransaction, end_all, write_prepared
from kafkawire.spark.writing import ArrowWriter
from kafkawire.testing import TansuBroker

RECORDS = int(os.environ.get("KAFKAWIRE_BENCH_SPARK_RECORDS", "1000000"))
PARTITIONS = 2
VALUE = b"x" * 100
STREAM_BATCH = 250_000


async def _raw_write(bootstrap: str, topic: str, records: int = RECORDS) -> None:
    async with Producer(bootstrap) as producer:
        for i in range(records):
            await producer.send(topic, VALUE, partition=i % PARTITIONS)
        await producer.flush()


async def _raw_read(bootstrap: str, topic: str) -> int:
    async with KafkaClient(bootstrap) as client:
        read = 0
        for p in range(PARTITIONS):
            async for _ in client.records(topic, p, 0, stop_at_end=True):
                read += 1
        return read


def _task_read(bootstrap: str, topic: str) -> None:
    assign = json.dumps({topic: list(range(PARTITIONS))})
    options = read_options(
        {"kafka.bootstrap.servers": bootstrap, "assign": assign}, streaming=False
    )
    per_partition = RECORDS // PARTITIONS
    for p in range(PARTITIONS):
        for _ in read_range(options, OffsetRange(topic, p, 0, per_partition)):
            pass


def _arrow_batches() -> list[Any]:
    chunk = 10_000
    batch = pa.RecordBatch.from_pydict(
        {
            "value": pa.array([VALUE] * chunk, pa.binary()),
            "partition": pa.array([i % PARTITIONS for i in range(chunk)], pa.int32()),
        }
    )
    return [batch] * (RECORDS // chunk)


def _task_write(bootstrap: str, topic: str) -> None:
    options = write_options({"kafka.bootstrap.servers": bootstrap, "topic": topic})
    ArrowWriter(options).write(iter(_arrow_batches()))


def _task_write_exactly_once(bootstrap: str, topic: str) -> None:
    options = write_options(
        {"kafka.bootstrap.servers": bootstrap, "topic": topic, "exactlyOnce": "true"}
    )
    task = TaskTransaction(0, "bench", "kafkawire-bench-0")
    prepared = asyncio.run(write_prepared(options, task, iter(_arrow_batches())))
    end_all(options, [prepared], 0, commit=True)


def _stream_copy(spark: Any, bootstrap: str, source: str, sink: str, **sink_options: str) -> None:
    """``source`` to ``sink`` through a streaming query, STREAM_BATCH records a batch."""
    with tempfile.TemporaryDirectory() as checkpoint:
        query = (
            spark.readStream.format("kafkawire")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", str(STREAM_BATCH))
            .load()
            .select("value")
            .writeStream.format("kafkawire")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", sink)
            .options(**sink_options)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        if query.exception() is not None:
            raise RuntimeError(f"the streaming query failed: {query.exception()}")


def _timed(what: str, run: Callable[[], Any]) -> float:
    began = time.perf_counter()
    run()
    rate = RECORDS / (time.perf_counter() - began)
    print(f"  {what:<34} {rate:>12,.0f} rows/s")
    return rate


def _session() -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    return (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )


def _compare(loop: asyncio.AbstractEventLoop, bootstrap: str, spark: Any) -> None:
    options = {"kafka.bootstrap.servers": bootstrap}
    names = ("bench-raw", "bench-task", "bench-task-eos", "bench-spark")
    names += ("bench-stream", "bench-stream-eos", "bench-warm", "bench-warm-to")

    async def create() -> None:
        async with KafkaClient(bootstrap) as client:
            for topic in names:
                await client.create_topic(topic, partitions=PARTITIONS)

    loop.run_until_complete(create())
    print(f"{RECORDS:,} records of {len(VALUE)} bytes, {PARTITIONS} partitions, local[2]")
    raw_write = _timed(
        "write: kafkawire Producer", lambda: asyncio.run(_raw_write(bootstrap, "bench-raw"))
    )
    task_write = _timed(
        "write: the data source's task code", lambda: _task_write(bootstrap, "bench-task")
    )
    frame = spark.range(RECORDS).selectExpr(
        f"CAST(repeat('x', {len(VALUE)}) AS BINARY) AS value",
        f"CAST(id % {PARTITIONS} AS INT) AS partition",
    )
    spark_write = _timed(
        "write: Spark format(kafkawire)",
        lambda: (
            frame.write.format("kafkawire")
            .options(**options)
            .option("topic", "bench-spark")
            .mode("append")
            .save()
        ),
    )
    raw_read = _timed(
        "read: KafkaClient.records", lambda: asyncio.run(_raw_read(bootstrap, "bench-raw"))
    )
    task_read = _timed(
        "read: the data source's task code", lambda: _task_read(bootstrap, "bench-raw")
    )
    spark_read = _timed(
        "read: Spark format(kafkawire)",
        lambda: (
            spark.read.format("kafkawire")
            .options(**options)
            .option("subscribe", "bench-raw")
            .load()
            .write.format("noop")
            .mode("overwrite")
            .save()
        ),
    )
    task_once = _timed(
        "write: task code, exactly once",
        lambda: _task_write_exactly_once(bootstrap, "bench-task-eos"),
    )
    # Untimed: the first streaming queries of a session start Spark's streaming machinery.
    asyncio.run(_raw_write(bootstrap, "bench-warm", 1_000))
    for once in ("false", "true"):
        _stream_copy(spark, bootstrap, "bench-warm", "bench-warm-to", exactlyOnce=once)
    stream = _timed(
        "stream copy: at least once",
        lambda: _stream_copy(spark, bootstrap, "bench-raw", "bench-stream"),
    )
    stream_once = _timed(
        "stream copy: exactly once",
        lambda: _stream_copy(spark, bootstrap, "bench-raw", "bench-stream-eos", exactlyOnce="true"),
    )
    print(
        f"  task code / raw: write {task_write / raw_write:.2f}x, read {task_read / raw_read:.2f}x"
    )
    print(f"  Spark / raw: write {spark_write / raw_write:.2f}x, read {spark_read / raw_read:.2f}x")
    print(
        f"  exactly once / at least once: task code {task_once / task_write:.2f}x, "
        f"stream copy {stream_once / stream:.2f}x"
    )


def main() -> None:
    loop = asyncio.new_event_loop()
    broker = TansuBroker()
    bootstrap = loop.run_until_complete(broker.__aenter__()).bootstrap
    try:
        spark = _session()
        gateway = spark.sparkContext._gateway
        try:
            _compare(loop, bootstrap, spark)
        finally:
            spark.stop()
            gateway.shutdown()
            gateway.proc.terminate()  # stop() leaves the JVM running: stop our child by pid
            gateway.proc.wait(timeout=30)
    finally:
        loop.run_until_complete(broker.__aexit__(None, None, None))
        loop.close()


if __name__ == "__main__":
    main()
