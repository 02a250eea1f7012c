"""``make demo``, the main job: events to Kafka, a Structured Streaming aggregation through
kafkawire, results back to Kafka, printed as they arrive.

An async producer writes purchase events (user, amount) to ``demo-events``, stamped 100 ms of
event time apart; a streaming query reads them with ``format("kafkawire")``, sums amounts and
counts events per user per 10 s window of event time, and writes each window's totals to
``demo-totals`` with kafkawire once the watermark closes it (append mode: Spark's Python sinks
take no update mode); a last event an hour later closes the open windows. kafkawire's async
consumer reads ``demo-totals`` and prints the totals as they arrive, then all of them as one
table. Spark logs only errors. Runs against ``KAFKAWIRE_BOOTSTRAP`` when set, else on an
embedded Tansu broker; stops the broker and Spark's JVM by pid on the way out, also on Ctrl-C
(exit status 130, no traceback).

Every coroutine runs on one event loop in a thread of its own (the one
:mod:`kafkawire.spark.worker` keeps for the process); the main thread only waits, on that loop
or on Spark. Ctrl-C raises in the main thread, so it interrupts a wait (which cancels what it
waited on) and never lands inside asyncio's own teardown, where it would leave a loop half
closed and a traceback at exit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from kafkawire.client import KafkaClient
from kafkawire.cluster import TopicPartition
from kafkawire.consumer import Consumer
from kafkawire.producer import Producer
from kafkawire.testing import TansuBroker

from .worker import worker_loop

EVENTS, TOTALS = "demo-events", "demo-totals"
USERS = ("ada", "grace", "linus")
COUNT = 300
PACE = 0.01  # seconds between sends: the stream sees the events arrive over a few seconds
TICK_MS = 100  # event time between events: 30 s, three windows
_STOP_TIMEOUT = 10.0  # seconds for the printer to stop after Ctrl-C or an error


async def _produce(bootstrap: str) -> None:
    start = int(time.time()) // 10 * 10_000  # a window boundary, in ms
    async with Producer(bootstrap) as producer:
        for i in range(COUNT):
            user = USERS[i % len(USERS)].encode()
            value = json.dumps({"amount": i % 7}).encode()
            await producer.send(EVENTS, value, user, timestamp_ms=start + i * TICK_MS)
            await asyncio.sleep(PACE)
        # An hour later in event time: the watermark passes every window above.
        await producer.send(EVENTS, b'{"amount": 0}', b"clock", timestamp_ms=start + 3_600_000)
        await producer.flush()
    print(f"producer: wrote {COUNT} events to {EVENTS}, and one an hour later")


Total = dict[str, Any]  # {"user", "start", "events", "amount"}


async def _print_totals(bootstrap: str, drain: threading.Event, quit_now: threading.Event) -> None:
    """Print each total as it arrives, read by kafkawire's async consumer; once ``drain`` is
    set, what is left, then the totals again as one table. ``quit_now`` (Ctrl-C) ends it at
    once: the broker may be gone."""
    totals = TopicPartition(TOTALS, 0)
    seen: list[Total] = []
    async with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([totals])
        while not quit_now.is_set():
            for record in (await consumer.getmany(timeout_ms=200)).get(totals, []):
                seen.append(json.loads(record.value or b"{}"))
                print("total: " + _row(seen[-1]), flush=True)
            if drain.is_set():
                end = (await consumer.end_offsets([totals]))[totals]
                if await consumer.position(totals) >= end:
                    break
    if seen and not quit_now.is_set():
        print(f"\nTotals per user and 10 s window, as read back from {TOTALS}:")
        print(f"  {'user':<6} {'window':<8}  events  amount")
        for total in sorted(seen, key=lambda t: (t["start"], t["user"])):
            print("  " + _row(total))


def _row(total: Total) -> str:
    return f"{total['user']:<6} {total['start']:<8}  {total['events']:>6}  {total['amount']:>6}"


# Spark's JVM logs warnings (native libraries, local hosts) that bury the demo's output: only
# errors, on stderr.
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


class _JvmStderr:
    """Spark's JVM, and the Python workers it starts, write to the stderr they inherit. Here
    they inherit a pipe that a thread copies to ours, until :meth:`silence`: after Ctrl-C the
    workers that lose their JVM mid-call print broken-pipe tracebacks that are no news."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        self._silenced = threading.Event()
        threading.Thread(target=self._relay, daemon=True).start()

    @contextlib.contextmanager
    def inherited(self) -> Any:
        """Processes started inside the block get the pipe as their stderr."""
        sys.stderr.flush()
        ours = os.dup(2)
        os.dup2(self._write, 2)
        try:
            yield
        finally:
            os.dup2(ours, 2)
            os.close(ours)

    def silence(self) -> None:
        self._silenced.set()

    def _relay(self) -> None:
        with open(self._read, "rb", buffering=0) as lines:
            for line in lines:
                if not self._silenced.is_set():
                    sys.stderr.buffer.write(line)
                    sys.stderr.flush()


def _session(workdir: Path, jvm_stderr: _JvmStderr) -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers need this Python (with kafkawire)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    log_config = workdir / "log4j2.properties"
    log_config.write_text(_LOG4J2)
    with jvm_stderr.inherited():  # the JVM starts here
        spark = (
            SparkSession.builder.master("local[2]")
            .appName("kafkawire-demo")
            .config(
                "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log_config}"
            )
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .getOrCreate()
        )
    spark.sparkContext.setLogLevel("ERROR")
    # PySpark's own Ctrl-C handler cancels Spark's jobs from inside the signal handler, on the
    # py4j connection the interrupted call is using (two tracebacks); stopping the session on
    # the way out cancels them as well.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return spark


def _query(spark: Any, bootstrap: str, checkpoint: str) -> Any:
    from pyspark.sql import functions

    events = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", EVENTS)
        .option("startingOffsets", "earliest")
        .load()
    )
    totals = (
        events.selectExpr(
            "CAST(key AS STRING) AS user",
            "CAST(get_json_object(CAST(value AS STRING), '$.amount') AS INT) AS amount",
            "timestamp",
        )
        .withWatermark("timestamp", "1 second")
        .groupBy("user", functions.window("timestamp", "10 seconds"))
        .agg(functions.count("*").alias("events"), functions.sum("amount").alias("amount"))
    )
    out = totals.selectExpr(
        "CAST(user AS BINARY) AS key",
        "CAST(to_json(named_struct('user', user, 'start', date_format(window.start, 'HH:mm:ss'),"
        " 'events', events, 'amount', amount)) AS BINARY) AS value",
    )
    return (
        out.writeStream.format("kafkawire")
        .outputMode("append")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", TOTALS)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="1 second")
        .start()
    )


def _pipeline(bootstrap: str) -> None:
    async def create() -> None:
        async with KafkaClient(bootstrap) as client:
            await client.create_topic(EVENTS, partitions=2, exist_ok=True)
            await client.create_topic(TOTALS, partitions=1, exist_ok=True)

    background = worker_loop()
    background.run(create())
    drain, quit_now = threading.Event(), threading.Event()
    printing: concurrent.futures.Future[None] | None = None
    with tempfile.TemporaryDirectory(prefix="kafkawire-demo-") as workdir:
        jvm_stderr = _JvmStderr()
        spark = _session(Path(workdir), jvm_stderr)
        gateway = spark.sparkContext._gateway
        try:
            query = _query(spark, bootstrap, str(Path(workdir) / "checkpoint"))
            printing = background.submit(_print_totals(bootstrap, drain, quit_now))
            background.run(_produce(bootstrap))
            query.processAllAvailable()  # every event is in a total before the query stops
            query.stop()
            drain.set()
            printing.result()
            print(f"query: {len(query.recentProgress)} batches, stopped")
        except KeyboardInterrupt:
            # Spark logs the batch it is stopped in as aborted, and its workers that lose the
            # JVM mid-call their broken pipes: on Ctrl-C that is no news.
            jvm_stderr.silence()
            with contextlib.suppress(Exception):
                spark.sparkContext.setLogLevel("OFF")
            raise
        finally:
            quit_now.set()  # after an error the printer stops at once: the broker may be gone
            with contextlib.suppress(Exception):  # what it raised is the first error's sequel
                if printing is not None:
                    printing.result(timeout=_STOP_TIMEOUT)
            with contextlib.suppress(Exception):  # on the way out after an error: stop all
                for running in spark.streams.active:  # before the session, or its batch fails
                    running.stop()
                spark.stop()
                gateway.shutdown()
            gateway.proc.terminate()  # stop() leaves Spark's JVM running: stop it by its pid
            gateway.proc.wait(timeout=30)
            print(f"stopped Spark's JVM (pid {gateway.proc.pid})")


def main() -> None:
    # py4j logs a traceback on the root logger when Ctrl-C interrupts a call to Spark (or when
    # closing its socket fails while handling that): the interruption is the demo's to report.
    # Other records print as they would without this.
    shown = logging.StreamHandler()
    shown.addFilter(lambda record: not _from_ctrl_c(record.exc_info))
    logging.getLogger().addHandler(shown)
    try:
        _run()
    except KeyboardInterrupt:  # Ctrl-C: everything it started is stopped; no traceback
        print("interrupted", file=sys.stderr)
        sys.exit(130)


def _from_ctrl_c(exc_info: Any) -> bool:
    """Whether a log record's exception is, or was raised while handling, a Ctrl-C."""
    error = exc_info[1] if exc_info else None
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return True
        error = error.__cause__ or error.__context__
    return False


def _run() -> None:
    external = os.environ.get("KAFKAWIRE_BOOTSTRAP")
    if external:
        _pipeline(external)
        return

    background = worker_loop()
    broker = background.run(TansuBroker().__aenter__())
    pid = broker.pid
    print(f"started {broker.name} at {broker.bootstrap} (pid {pid})")
    try:
        _pipeline(broker.bootstrap)
    finally:
        background.run(broker.__aexit__(None, None, None))
        print(f"stopped the broker (pid {pid})")


if __name__ == "__main__":
    main()
