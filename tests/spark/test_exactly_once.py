"""Exactly-once streaming writes (exactlyOnce=true): a re-run batch is not written twice, and a
failed attempt leaves nothing a read_committed consumer would see.

Neither embedded broker lists aborted transactions in Fetch, so what read_committed returns is
worked out from the markers in the log (tests/transaction_log.py).
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.functions import col, udf

from kafkawire.client import KafkaClient
from kafkawire.producer import PreparedTransaction
from kafkawire.spark.options import write_options
from kafkawire.spark.transactional import (
    ExactlyOnceError,
    Prepared,
    check_transactions_served,
    end_all,
)
from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.pytest_plugin import Broker
from tests.transaction_log import raw_log, read_committed

from .conftest import creates_topics, fill, new_topic, start_copy
from .streaming import run_to_end

LIMIT = 6


def _topics(
    broker: Broker, records: int, partitions: int = 2
) -> tuple[str, str, list[tuple[bytes, bytes]]]:
    """A source holding ``records`` records in its first ``partitions`` partitions, and an
    empty sink (the mock cluster makes both topics itself, with four partitions)."""
    source, sink = new_topic(), new_topic()
    create = creates_topics(broker)
    written = fill(broker.bootstrap, source, records, partitions=partitions, create=create)
    if create:
        fill(broker.bootstrap, sink, 0)
    return source, sink, written


def _start(
    spark: SparkSession,
    bootstrap: str,
    source: str,
    sink: str,
    checkpoint: Path,
    *,
    frame: Any = None,
) -> Any:
    """An availableNow copy from ``source`` to ``sink``, exactly once, in batches of about
    LIMIT records; ``frame`` changes the rows on the way."""
    return start_copy(
        spark, bootstrap, source, sink, checkpoint, limit=LIMIT, change=frame, exactlyOnce="true"
    )


def _committed(bootstrap: str, topic: str) -> tuple[Counter[tuple[bytes, bytes]], int]:
    """(key, value) of every record read_committed returns, and how many records the log
    holds in all (aborted and open transactions included)."""

    async def run() -> tuple[Counter[tuple[bytes, bytes]], int]:
        async with KafkaClient(bootstrap) as client:
            partitions = (await client.cluster.metadata([topic])).topics[topic].partitions
        seen: Counter[tuple[bytes, bytes]] = Counter()
        total = 0
        for partition in sorted(partitions):
            log = await raw_log(bootstrap, topic, partition)
            total += sum(len(b.records) for b in log if not b.is_control)
            seen.update((r.key, r.value) for r in read_committed(log))
        return seen, total

    return asyncio.run(run())


def test_a_batch_committed_before_a_restart_is_not_written_again(
    spark: SparkSession, tansu_broker: Broker, tmp_path: Path
) -> None:
    """On Tansu: the mock cluster stores no TxnOffsetCommit (the producer's tests show it), so
    there the marker is lost and the batch is written again."""
    bootstrap = tansu_broker.bootstrap
    source, sink, written = _topics(tansu_broker, LIMIT)  # one batch
    first = run_to_end(lambda: _start(spark, bootstrap, source, sink, tmp_path))
    assert first.exception() is None
    last = max(p["batchId"] for p in first.recentProgress if p["numInputRows"])
    # As if the driver died after committing the batch to Kafka and before the checkpoint
    # recorded it: Spark runs it again, with the same id and input.
    for name in (str(last), f".{last}.crc"):
        (tmp_path / "commits" / name).unlink()
    again = run_to_end(lambda: _start(spark, bootstrap, source, sink, tmp_path))
    assert again.exception() is None
    rerun = [p for p in again.recentProgress if p["batchId"] == last and p["numInputRows"]]
    assert rerun, f"batch {last} was not run again"
    assert _committed(bootstrap, sink)[0] == Counter(written)


def test_a_failed_attempt_leaves_nothing_visible(
    spark: SparkSession, kafka_broker: Broker, tmp_path: Path
) -> None:
    """The first attempt of the batch fails at its last row, after the brokers took the rows
    before it; none of them becomes visible, and the run after it writes each row once."""
    bootstrap = kafka_broker.bootstrap
    source, sink, written = _topics(kafka_broker, LIMIT, partitions=1)  # one task with rows
    failed_once = tmp_path / "failed-once"
    victim = written[-1][1]

    @udf("int", useArrow=False)  # Arrow UDFs need pandas
    def partition_of(value: bytes) -> int:
        if value == victim and not os.path.exists(failed_once):
            Path(failed_once).touch()
            return 99  # no such partition: the task's send raises
        return 0

    def poisoned(stream: Any) -> Any:
        return stream.withColumn("partition", partition_of(col("value")))

    checkpoint = tmp_path / "checkpoint"
    small = "spark.sql.execution.arrow.maxRecordsPerBatch"
    spark.conf.set(small, "2")  # the task's rows come in three Arrow batches, sent in turn
    try:
        with pytest.raises(Exception, match="partition 99 does not exist"):
            run_to_end(lambda: _start(spark, bootstrap, source, sink, checkpoint, frame=poisoned))
    finally:
        spark.conf.unset(small)
    visible, total = _committed(bootstrap, sink)
    assert victim not in {value for _, value in visible}
    assert total > sum(visible.values())  # the failed attempt's first rows are in the log
    again = run_to_end(lambda: _start(spark, bootstrap, source, sink, checkpoint, frame=poisoned))
    assert again.exception() is None
    assert _committed(bootstrap, sink)[0] == Counter(written)


async def test_a_broker_without_the_transaction_apis_is_refused_naming_them() -> None:
    without = {26: range(0), 28: range(0)}  # no EndTxn, no TxnOffsetCommit
    async with FakeCluster(api_versions=without) as cluster:
        options = write_options({"kafka.bootstrap.servers": cluster.bootstrap})
        with pytest.raises(ExactlyOnceError, match="does not serve EndTxn, TxnOffsetCommit"):
            await asyncio.to_thread(check_transactions_served, options)
    async with FakeCluster() as cluster:
        options = write_options({"kafka.bootstrap.servers": cluster.bootstrap})
        await asyncio.to_thread(check_transactions_served, options)


def test_a_commit_that_fails_names_the_timeout_and_an_abort_only_logs(
    mock_cluster: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    options = write_options({"kafka.bootstrap.servers": mock_cluster.bootstrap})
    unknown = PreparedTransaction("kafkawire-unknown-0", producer_id=4242, producer_epoch=0)
    messages = [Prepared(7, 3, unknown), None]
    with pytest.raises(ExactlyOnceError, match=r"1 of 1 .*kafka\.transaction\.timeout\.ms"):
        end_all(options, messages, 7, commit=True)
    end_all(options, messages, 7, commit=False)
    assert "ending the transaction of kafkawire-unknown-0 failed" in caplog.text
    with pytest.raises(ExactlyOnceError, match=r"batch 8 got commit messages of batches \[7\]"):
        end_all(options, messages, 8, commit=True)
