"""``make demo``, the main job: events to Kafka, a Structured Streaming aggregation through
kafkawire, results back to Kafka, printed as they arrive.

An async producer writes purchase events (user, amount) to ``demo-events``, stamped 100 ms of
event time apart; a streaming query reads them with ``format("kafkawire")``, sums amounts and
counts events per user per 10 s window of event time, and writes each window's totals to
``demo-totals`` with kafkawire once the watermark closes it (append mode: Spark's Python sinks
take no update mode); a last event an hour later closes the open windows. kafkawire's async
consumer reads ``demo-totals`` and prints the totals as they arrive. Runs against
``KAFKAWIRE_BOOTSTRAP`` when set, else on an embedded Tansu broker; stops the broker and
Spark's JVM by pid on the way out.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from typing import Any

from kafkawire.client import KafkaClient
from kafkawire.cluster import TopicPartition
from kafkawire.consumer import Consumer
from kafkawire.producer import Producer
from kafkawire.testing import TansuBroker

EVENTS, TOTALS = "demo-events", "demo-totals"
USERS = ("ada", "grace", "linus")
COUNT = 300
PACE = 0.01  # seconds between sends: the stream sees the events arrive over a few seconds
TICK_MS = 100  # event time between events: 30 s, three windows


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


async def _print_totals(bootstrap: str, stop: threading.Event) -> None:
    """Print each total as it arrives, read by kafkawire's async consumer; once ``stop`` is
    set, what is left, then return."""
    totals = TopicPartition(TOTALS, 0)
    async with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([totals])
        while True:
            for record in (await consumer.getmany(timeout_ms=200)).get(totals, []):
                total = json.loads(record.value or b"{}")
                print(
                    f"total: {total['user']:<6} {total['start']}  {total['events']:>3} events,"
                    f" amount {total['amount']}"
                )
            if stop.is_set():
                end = (await consumer.end_offsets([totals]))[totals]
                if await consumer.position(totals) >= end:
                    return


def _session() -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers need this Python (with kafkawire)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    return (
        SparkSession.builder.master("local[2]")
        .appName("kafkawire-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )


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
    import tempfile

    async def create() -> None:
        async with KafkaClient(bootstrap) as client:
            await client.create_topic(EVENTS, partitions=2, exist_ok=True)
            await client.create_topic(TOTALS, partitions=1, exist_ok=True)

    asyncio.run(create())
    stop = threading.Event()
    printer = threading.Thread(target=lambda: asyncio.run(_print_totals(bootstrap, stop)))
    spark = _session()
    gateway = spark.sparkContext._gateway
    try:
        with tempfile.TemporaryDirectory(prefix="kafkawire-demo-") as checkpoint:
            query = _query(spark, bootstrap, checkpoint)
            printer.start()
            asyncio.run(_produce(bootstrap))
            query.processAllAvailable()  # every event is in a total before the query stops
            query.stop()
            print(f"query: {len(query.recentProgress)} batches, stopped")
    finally:
        stop.set()
        if printer.is_alive():
            printer.join()
        spark.stop()
        gateway.shutdown()
        gateway.proc.terminate()  # stop() leaves Spark's JVM running: stop it by its pid
        gateway.proc.wait(timeout=30)
        print(f"stopped Spark's JVM (pid {gateway.proc.pid})")


def main() -> None:
    external = os.environ.get("KAFKAWIRE_BOOTSTRAP")
    if external:
        _pipeline(external)
        return

    async def start() -> TansuBroker:
        return await TansuBroker().__aenter__()

    loop = asyncio.new_event_loop()
    broker = loop.run_until_complete(start())
    pid = broker.pid
    print(f"started {broker.name} at {broker.bootstrap} (pid {pid})")
    try:
        _pipeline(broker.bootstrap)
    finally:
        loop.run_until_complete(broker.__aexit__(None, None, None))
        loop.close()
        print(f"stopped the broker (pid {pid})")


if __name__ == "__main__":
    main()
