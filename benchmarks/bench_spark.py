"""Spark through kafkawire against the raw kafkawire consumer and bulk producer, in one run.

RECORDS records of 100 bytes in a two-partition topic on the embedded Tansu broker, local[2]:

- read: the raw ``Consumer.getmany`` (both partitions assigned), the data source's task code
  without Spark (``read_range``, one partition after the other, in this process, with the
  client this process keeps between rounds as a Spark worker keeps it between tasks), and
  ``spark.read.format("kafkawire")`` with every column materialized by Spark's ``noop``
  sink; beside them Spark's ceiling for any Python data source here: a source whose tasks
  yield ready-made Arrow batches of the same schema from memory;
- write: the raw ``Producer.send_batch`` fed Arrow batches of 10,000 rows (the producer's
  default ``batch_size``, and Java's 16384), the writer's task code fed the same
  batches, and ``df.write.format("kafkawire")`` of ``spark.range`` rows; beside them Spark's
  ceiling: a Python data source whose writer drops the Arrow batches it gets; and the task
  code writing all records in one transaction (exactly once);
- copy: the topic copied through kafkawire by one batch job (read, select, write), and by a
  streaming query in micro-batches of STREAM_BATCH records (trigger availableNow), at least
  once and exactly once, and at least once in one micro-batch of all records: the whole
  query, and its micro-batches alone (their ``triggerExecution``, without the query's start
  and end), with where a micro-batch's time goes (Spark's job, its checkpoint, planning).

Each figure is the best of ROUNDS rounds (three for reads), each round running every path of
its section once, so that the load of a shared machine falls on all of them alike; beside it
the CPU per row of the whole process tree (this process, Tansu, the JVM and Spark's Python
workers, from /proc), which that load does not change: on a busy machine rows/s go as its
inverse. It is split by process, and the JVM's JIT compiler threads apart: they compile
for each new kind of job and keep on for runs after it (0.1-0.5 us a row of 1M rows here,
varying run to run by more than a data source's changes), so a ratio is also given without
them. An untimed warm-up of each Spark path comes first (the first job of a kind in a
session pays for the JVM's compilation and the Python workers' start). Prints rows/s, CPU per
row and the ratios: Spark to the raw client (getmany, send_batch) and to the ceiling, the
task code to the raw client.
Spark's own Kafka source (a JVM package from Maven) is not installed here, so there is no
peer beyond the ceiling. Set KAFKAWIRE_BENCH_SPARK_RECORDS to change the count (default
1,000,000).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import pyarrow as pa

from kafkawire.client import KafkaClient
from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.producer import Producer, ProducerSettings
from kafkawire.spark.arrow import arrow_schema, read_schema
from kafkawire.spark.offsets import OffsetRange
from kafkawire.spark.options import WRITE_BATCH_SIZE, read_options, write_options
from kafkawire.spark.reading import read_range
from kafkawire.spark.transactional import TaskTransaction, end_all, write_prepared
from kafkawire.spark.worker import close_kept_clients
from kafkawire.spark.writing import ArrowWriter
from kafkawire.testing import TansuBroker

DEFAULT_BATCH_SIZE = attrs.fields(ProducerSettings).batch_size.default

RECORDS = int(os.environ.get("KAFKAWIRE_BENCH_SPARK_RECORDS", "1000000"))
ROUNDS = 2
PARTITIONS = 2
VALUE = b"x" * 100
STREAM_BATCH = 250_000
CHUNK = 10_000  # rows per Arrow batch fed to the writers, and yielded by the ceiling source
JAVA_BATCH_SIZE = 16384


def _arrow_batches(rows: int = RECORDS) -> list[Any]:
    batch = pa.RecordBatch.from_pydict(
        {
            "value": pa.array([VALUE] * CHUNK, pa.binary()),
            "partition": pa.array([i % PARTITIONS for i in range(CHUNK)], pa.int32()),
        }
    )
    return [batch] * (rows // CHUNK)


async def _getmany(bootstrap: str, topic: str) -> None:
    async with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        count = 0
        while count < RECORDS:
            for records in (await consumer.getmany(timeout_ms=1000, max_records=10_000)).values():
                count += len(records)


async def _send_batch(bootstrap: str, topic: str, batch_size: int, rows: int = RECORDS) -> None:
    async with Producer(bootstrap, batch_size=batch_size) as producer:
        deliveries = [
            await producer.send_batch(topic, b.column("value"), partition=b.column("partition"))
            for b in _arrow_batches(rows)
        ]
        await producer.flush()
        for delivery in deliveries:
            await delivery


def _task_read(bootstrap: str, topic: str) -> None:
    assign = json.dumps({topic: list(range(PARTITIONS))})
    options = read_options(
        {"kafka.bootstrap.servers": bootstrap, "assign": assign}, streaming=False
    )
    per_partition = RECORDS // PARTITIONS
    for p in range(PARTITIONS):
        for _ in read_range(options, OffsetRange(topic, p, 0, per_partition)):
            pass


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


def _spark_read(spark: Any, bootstrap: str, topic: str, source: str = "kafkawire") -> None:
    (
        spark.read.format(source)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .load()
        .write.format("noop")
        .mode("overwrite")
        .save()
    )


def _spark_write(spark: Any, bootstrap: str, topic: str, rows: int = RECORDS) -> None:
    frame = spark.range(rows).selectExpr(
        f"CAST(repeat('x', {len(VALUE)}) AS BINARY) AS value",
        f"CAST(id % {PARTITIONS} AS INT) AS partition",
    )
    frame.write.format("kafkawire").option("kafka.bootstrap.servers", bootstrap).option(
        "topic", topic
    ).mode("append").save()


def _ceiling_write(spark: Any) -> None:
    frame = spark.range(RECORDS).selectExpr(
        f"CAST(repeat('x', {len(VALUE)}) AS BINARY) AS value",
        f"CAST(id % {PARTITIONS} AS INT) AS partition",
    )
    frame.write.format("kafkawire-ceiling").mode("append").save()


def _register_ceiling(spark: Any) -> None:
    """``kafkawire-ceiling``: reads ready-made Arrow batches, writes to nowhere."""
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )

    class MemoryReader(DataSourceReader):
        def partitions(self) -> Sequence[InputPartition]:
            return [InputPartition(p) for p in range(PARTITIONS)]

        def read(self, partition: InputPartition) -> Iterator[Any]:
            rows = range(CHUNK)
            columns = [
                pa.nulls(CHUNK, pa.binary()),
                pa.array([VALUE] * CHUNK, pa.binary()),
                pa.repeat(pa.scalar("ceiling", pa.string()), CHUNK),
                pa.repeat(pa.scalar(partition.value, pa.int32()), CHUNK),
                pa.array(rows, pa.int64()),
                pa.array(rows, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
                pa.repeat(pa.scalar(0, pa.int32()), CHUNK),
            ]
            batch = pa.RecordBatch.from_arrays(columns, schema=arrow_schema(False))
            for _ in range(RECORDS // PARTITIONS // CHUNK):
                yield batch

    class DroppingWriter(DataSourceArrowWriter):
        def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

    class Ceiling(DataSource):
        @classmethod
        def name(cls) -> str:
            return "kafkawire-ceiling"

        def schema(self) -> str:
            return read_schema(False)

        def reader(self, schema: Any) -> DataSourceReader:
            return MemoryReader()

        def writer(self, schema: Any, overwrite: bool) -> DataSourceArrowWriter:
            return DroppingWriter()

    spark.dataSource.register(Ceiling)


def _stream_copy(
    spark: Any,
    bootstrap: str,
    source: str,
    sink: str,
    per_batch: int = STREAM_BATCH,
    **sink_options: str,
) -> list[dict[str, int]]:
    """``source`` to ``sink`` through a streaming query, ``per_batch`` records a batch; the
    milliseconds of each micro-batch by phase (Spark's ``durationMs``: ``triggerExecution``
    is the whole batch, without the query's start and end)."""
    with tempfile.TemporaryDirectory() as checkpoint:
        query = (
            spark.readStream.format("kafkawire")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", str(per_batch))
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
        # Batch 0 reads nothing (it pins the starting offsets in the checkpoint, see
        # StreamReader.initialOffset): part of the query's start, as Spark's Kafka source's
        # writing of its starting offsets is, so left out with it.
        return [p["durationMs"] for p in query.recentProgress if p["numInputRows"] > 0]


def _batch_copy(spark: Any, bootstrap: str, source: str, sink: str) -> None:
    """What a stream copy does, as one batch job: read, select, write."""
    (
        spark.read.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .load()
        .select("value")
        .write.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .mode("append")
        .save()
    )


_PARTS = ("JVM", "JIT", "Python workers", "Tansu", "here")


def _tree_cpu_seconds() -> dict[str, float]:
    """CPU seconds of this process and every process under it, by part (_PARTS): the JVM,
    apart from its JIT compiler threads (whose work falls with each run of a kind, not with
    its rows), Spark's Python workers, Tansu, and this process (with reaped children, counted
    in their parent); from /proc, empty without it. A compiler thread that ends between two
    readings moves its time from JIT to JVM."""
    parents: dict[int, list[int]] = {}
    times: dict[int, tuple[str, float]] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                name, fields = stat.read().split(" (", 1)[1].rsplit(")", 1)
        except OSError:  # gone meanwhile
            continue
        numbers = fields.split()
        parents.setdefault(int(numbers[1]), []).append(int(entry))
        times[int(entry)] = name, sum(int(f) for f in numbers[11:15]) / tick  # u, s, cu, cs
    parts = dict.fromkeys(_PARTS, 0.0)
    todo = [(os.getpid(), "here")]
    while todo:
        pid, part = todo.pop()
        name, seconds = times.get(pid, ("", 0.0))
        if part != "Python workers":
            part = {"java": "JVM", "tansu": "Tansu"}.get(name, part)
            if part == "JVM" and name.startswith("python"):
                part = "Python workers"
        if part == "JVM":
            jit = _compiler_seconds(pid, tick)
            parts["JIT"] += jit
            seconds -= jit
        parts[part] += seconds
        todo += [(child, part) for child in parents.get(pid, [])]
    return parts


def _compiler_seconds(pid: int, tick: int) -> float:
    """CPU seconds of the JVM's JIT compiler threads ("C1 CompilerThre", "C2 ...")."""
    total = 0.0
    for thread in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else ():
        try:
            with open(f"/proc/{pid}/task/{thread}/stat") as stat:
                name, fields = stat.read().split(" (", 1)[1].rsplit(")", 1)
        except OSError:
            continue
        if "CompilerThre" in name:
            total += sum(int(f) for f in fields.split()[11:13]) / tick
    return total


class _Table:
    """Rows/s of each path: the best of its rounds, the rounds interleaved (each round runs
    every path once), so that the load of a shared machine falls on all paths alike; and the
    CPU per row of the whole process tree (the least of the rounds), which that load does not
    change."""

    def __init__(self) -> None:
        self.rates: dict[str, float] = {}
        self.cpu: dict[str, dict[str, float]] = {}  # us per row by part (_PARTS)

    def race(self, paths: dict[str, Callable[[int], Any]], rounds: int = ROUNDS) -> None:
        """Run each of ``paths`` (``run(round)``) once a round; print each best rate."""
        for round_ in range(rounds):
            for what, run in paths.items():
                began, cpu = time.perf_counter(), _tree_cpu_seconds()
                run(round_)
                rate = RECORDS / (time.perf_counter() - began)
                after = _tree_cpu_seconds()
                parts = {part: (after[part] - cpu[part]) / RECORDS * 1e6 for part in after}
                self.rates[what] = max(self.rates.get(what, 0.0), rate)
                if parts and sum(parts.values()) < sum(self.cpu.get(what, {"": math.inf}).values()):
                    self.cpu[what] = parts
        for what in paths:
            self.show(what)

    def show(self, what: str) -> None:
        cpu = ""
        if what in self.cpu:
            parts = self.cpu[what]
            split = ", ".join(f"{part} {parts[part]:.2f}" for part in _PARTS if parts[part] >= 0.01)
            cpu = f"{sum(parts.values()):>6.2f} us CPU/row ({split})"
        print(f"  {what:<44} {self.rates[what]:>12,.0f} rows/s {cpu}")

    def ratio(self, what: str, to: str) -> str:
        return f"{self.rates[what] / self.rates[to]:.2f}x {to}"

    def summary(self, label: str, raw: str, ceiling: str) -> None:
        """Spark's ratios to the raw client and to the ceiling, and the task code's."""
        spark, task = "Spark format(kafkawire)", "data source task code, no Spark"
        print(
            f"  {label}: {self.ratio(spark, raw)}, {self.ratio(spark, ceiling)};"
            f" task code: {self.ratio(task, raw)}"
        )
        if self.cpu.get(spark) and self.cpu.get(raw):
            cpu = {what: sum(self.cpu[what].values()) for what in (raw, spark)}
            jit = self.cpu[spark]["JIT"]
            print(
                f"  CPU per row, {raw} / Spark: {cpu[raw] / cpu[spark]:.2f}x"
                f" ({cpu[raw] / (cpu[spark] - jit):.2f}x without the JIT's)"
            )


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


def _create(bootstrap: str, topics: list[str]) -> None:
    async def create() -> None:
        async with KafkaClient(bootstrap) as client:
            for topic in topics:
                await client.create_topic(topic, partitions=PARTITIONS)

    asyncio.run(create())


def _reads(table: _Table, bootstrap: str, spark: Any) -> None:
    print("read")
    ceiling = "Spark ceiling: Arrow batches from memory"
    _spark_read(spark, bootstrap, "bench-warm")  # the warm-ups: untimed
    _spark_read(spark, bootstrap, "bench-raw")
    _spark_read(spark, bootstrap, "bench-raw", "kafkawire-ceiling")
    table.race(
        {
            "raw: Consumer.getmany": lambda _: asyncio.run(_getmany(bootstrap, "bench-raw")),
            "data source task code, no Spark": lambda _: _task_read(bootstrap, "bench-raw"),
            "Spark format(kafkawire)": lambda _: _spark_read(spark, bootstrap, "bench-raw"),
            ceiling: lambda _: _spark_read(spark, bootstrap, "bench-raw", "kafkawire-ceiling"),
        },
        rounds=3,
    )
    table.summary("Spark read", "raw: Consumer.getmany", ceiling)


def _writes(table: _Table, bootstrap: str, spark: Any) -> None:
    print(f"write (the writer's default kafka.batch.size {WRITE_BATCH_SIZE:,})")
    raw = f"raw: Producer.send_batch, batch_size {DEFAULT_BATCH_SIZE:,}"
    ceiling = "Spark ceiling: a writer that drops its rows"
    _spark_write(spark, bootstrap, "bench-warm-to", 100_000)  # the warm-ups: untimed
    _ceiling_write(spark)
    table.race(
        {
            raw: lambda r: asyncio.run(
                _send_batch(bootstrap, f"bench-send-{r}", DEFAULT_BATCH_SIZE)
            ),
            f"raw: Producer.send_batch, batch_size {JAVA_BATCH_SIZE:,}": lambda r: asyncio.run(
                _send_batch(bootstrap, f"bench-send16-{r}", JAVA_BATCH_SIZE)
            ),
            "data source task code, no Spark": lambda r: _task_write(bootstrap, f"bench-task-{r}"),
            "Spark format(kafkawire)": lambda r: _spark_write(spark, bootstrap, f"bench-spark-{r}"),
            ceiling: lambda _: _ceiling_write(spark),
            "task code write, exactly once": lambda r: _task_write_exactly_once(
                bootstrap, f"bench-task-eos-{r}"
            ),
        }
    )
    table.summary("Spark write", raw, ceiling)
    once = table.rates["task code write, exactly once"]
    print(
        f"  task code, exactly once: {once / table.rates['data source task code, no Spark']:.2f}x"
    )


def _streams(table: _Table, bootstrap: str, spark: Any) -> None:
    print(f"copy a topic: batch job, and streams in micro-batches of {STREAM_BATCH:,} or of all")
    _batch_copy(spark, bootstrap, "bench-warm", "bench-warm-to")  # the warm-ups: untimed
    for once in ("false", "true"):
        _stream_copy(spark, bootstrap, "bench-warm", "bench-warm-to", exactlyOnce=once)
    kinds = {  # name: (exactlyOnce, records a micro-batch)
        "at least once": ("false", STREAM_BATCH),
        "exactly once": ("true", STREAM_BATCH),
        "one micro-batch": ("false", RECORDS),  # at least once
    }
    batches: dict[str, list[list[dict[str, int]]]] = {name: [] for name in kinds}

    def stream(name: str) -> Callable[[int], Any]:
        once, per_batch = kinds[name]

        def copy(r: int) -> None:
            sink = f"bench-stream-{list(kinds).index(name)}-{r}"
            batches[name].append(
                _stream_copy(spark, bootstrap, "bench-raw", sink, per_batch, exactlyOnce=once)
            )

        return copy

    whole = {name: f"stream, {name}: the whole query" for name in kinds}
    table.race(
        {
            "batch job: read, select, write": lambda r: _batch_copy(
                spark, bootstrap, "bench-raw", f"bench-copy-{r}"
            ),
            **{whole[name]: stream(name) for name in kinds},
        }
    )
    for name, (_, per_batch) in kinds.items():
        for phase, label in (("triggerExecution", "micro-batches"), ("addBatch", "their jobs")):
            seconds = [sum(batch[phase] for batch in run) / 1000 for run in batches[name]]
            table.rates[f"stream, {name}: {label}"] = RECORDS / min(seconds)
            table.show(f"stream, {name}: {label}")
        _show_phases(batches[name], per_batch)
    batch_job = "batch job: read, select, write"
    least, most = "stream, at least once: micro-batches", "stream, exactly once: micro-batches"
    one = "stream, one micro-batch: micro-batches"
    print(
        f"  stream micro-batches: {table.ratio(least, batch_job)}; one micro-batch: "
        f"{table.ratio(one, batch_job)}; its job (addBatch): "
        f"{table.ratio('stream, one micro-batch: their jobs', batch_job)}; "
        f"exactly once / at least once {table.rates[most] / table.rates[least]:.2f}x"
    )


def _show_phases(runs: list[list[dict[str, int]]], per_batch: int) -> None:
    """Where a micro-batch's time goes, medians over every batch of the runs: the tasks
    (``addBatch``: Spark's job, the reads and writes, the writer's commit), Spark's
    checkpoint (``walCommit``, ``commitOffsets``: the offset and commit logs), and the
    planning around them (``latestOffset``, the reader's call to Kafka, among it)."""
    batches = [batch for run in runs for batch in run]
    phases = ("addBatch", "walCommit", "commitOffsets", "latestOffset", "queryPlanning")
    medians = {p: statistics.median(batch.get(p, 0) for batch in batches) for p in phases}
    whole = statistics.median(batch["triggerExecution"] for batch in batches)
    split = ", ".join(f"{phase} {ms:.0f}" for phase, ms in medians.items())
    print(f"    a micro-batch of {min(per_batch, RECORDS):,}: {whole:.0f} ms ({split})")


def _compare(bootstrap: str, spark: Any) -> None:
    topics = ["bench-raw", "bench-warm", "bench-warm-to"]
    kinds = ["send", "send16", "task", "spark", "task-eos", "copy"]
    kinds += [f"stream-{kind}" for kind in range(3)]
    for r in range(ROUNDS):
        topics += [f"bench-{kind}-{r}" for kind in kinds]
    _create(bootstrap, topics)
    _register_ceiling(spark)
    asyncio.run(_send_batch(bootstrap, "bench-raw", DEFAULT_BATCH_SIZE))
    asyncio.run(_send_batch(bootstrap, "bench-warm", DEFAULT_BATCH_SIZE, 100_000))
    print(f"{RECORDS:,} records of {len(VALUE)} bytes, {PARTITIONS} partitions, local[2]")
    _reads(_Table(), bootstrap, spark)
    _writes(_Table(), bootstrap, spark)
    _streams(_Table(), bootstrap, spark)


def main() -> None:
    loop = asyncio.new_event_loop()
    broker = TansuBroker()
    bootstrap = loop.run_until_complete(broker.__aenter__()).bootstrap
    try:
        spark = _session()
        gateway = spark.sparkContext._gateway
        try:
            _compare(bootstrap, spark)
        finally:
            close_kept_clients()  # the task code's, in this process, before the broker goes
            spark.stop()
            gateway.shutdown()
            gateway.proc.terminate()  # stop() leaves the JVM running: stop our child by pid
            gateway.proc.wait(timeout=30)
    finally:
        loop.run_until_complete(broker.__aexit__(None, None, None))
        loop.close()


if __name__ == "__main__":
    main()
