"""One local Spark session for every Spark test (a session takes 10-12 s to start), and
helpers that put records into a topic and read a topic back with the plain client."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from kafkawire.client import KafkaClient
from kafkawire.producer import Producer
from kafkawire.spark.worker import close_kept_clients
from kafkawire.testing.pytest_plugin import Broker

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("Spark needs Java 17 (make test installs it where it can)", allow_module_level=True)
from pyspark.sql import SparkSession  # noqa: E402

_names = count()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(autouse=True)
def _no_kept_clients() -> Iterator[None]:
    """Readers and writers called in this process keep their clients (kafkawire.spark.worker):
    close them after each test, whose brokers go away with it."""
    yield
    close_kept_clients()


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    # Spark's workers must run this interpreter (it has kafkawire), and bind only loopback.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    session = (
        SparkSession.builder.master("local[2]")
        .appName("kafkawire-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    gateway = session.sparkContext._gateway
    try:
        yield session
    finally:
        session.stop()
        # stop() leaves the JVM running; it is our child: stop it by its pid.
        process = gateway.proc if gateway is not None else None
        gateway.shutdown()
        if process is not None:
            process.terminate()
            process.wait(timeout=30)


def new_topic() -> str:
    return f"spark-{os.getpid()}-{next(_names)}"


def creates_topics(broker: Broker) -> bool:
    """Whether ``fill`` can create topics there (the mock cluster has no CreateTopics)."""
    return broker.capabilities.missing("CreateTopics") is None


def fill(
    bootstrap: str,
    topic: str,
    records: int,
    *,
    partitions: int = 2,
    headers: bool = False,
    first: int = 0,
    create: bool = True,
) -> list[tuple[bytes, bytes]]:
    """Create ``topic`` (if new) and write ``records`` keyed records round-robin over its
    partitions, numbered from ``first``; returns (key, value) pairs in the order written.
    Without ``create`` the broker creates the topic (the mock cluster has no CreateTopics:
    it makes four partitions)."""
    written = [(f"k{i}".encode(), f"v{i}".encode()) for i in range(first, first + records)]

    async def run() -> None:
        if create:
            async with KafkaClient(bootstrap) as client:
                await client.create_topic(topic, partitions=partitions, exist_ok=True)
        async with Producer(bootstrap) as producer:
            deliveries = [
                await producer.send(
                    topic,
                    value,
                    key,
                    partition=i % partitions,
                    headers=[("h", key)] if headers else None,
                )
                for i, (key, value) in enumerate(written)
            ]
            await producer.flush()
            for delivery in deliveries:
                await delivery

    asyncio.run(run())
    return written


def read_back(bootstrap: str, topic: str, partitions: int) -> list[tuple[int, int, bytes, bytes]]:
    """Every record of ``topic``: (partition, offset, key, value)."""

    async def run() -> list[tuple[int, int, bytes, bytes]]:
        async with KafkaClient(bootstrap) as client:
            return [
                (p, r.offset, r.key or b"", r.value or b"")
                for p in range(partitions)
                async for r in client.records(topic, p, 0, stop_at_end=True, max_wait_ms=10)
            ]

    return asyncio.run(run())


def start_copy(
    spark: SparkSession,
    bootstrap: str,
    source: str,
    sink: str,
    checkpoint: Path,
    *,
    limit: int | None = None,
    change: Callable[[Any], Any] | None = None,
    read: Mapping[str, str] | None = None,
    trigger: Mapping[str, Any] | None = None,
    **sink_options: str,
) -> Any:
    """Start a query that copies ``source`` (key and value; a name with ``*`` is a
    subscribePattern) to ``sink`` through kafkawire: from its earliest records unless
    ``read`` (more read options) says otherwise, at most about ``limit`` a batch, as
    ``trigger`` says (availableNow unless given); ``change`` alters the rows on the way."""
    subscription = "subscribePattern" if "*" in source else "subscribe"
    reading = {subscription: source, "startingOffsets": "earliest", **(read or {})}
    if limit is not None:
        reading["maxOffsetsPerTrigger"] = str(limit)
    stream = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .options(**reading)
        .load()
        .select("key", "value")
    )
    return (
        (stream if change is None else change(stream))
        .writeStream.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", sink)
        .options(**sink_options)
        .option("checkpointLocation", str(checkpoint))
        .trigger(**(trigger or {"availableNow": True}))
        .start()
    )
