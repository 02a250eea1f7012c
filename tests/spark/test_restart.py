"""Streams stopped and restarted from their checkpoint, as with Spark's Kafka source: nothing
lost at least once, nothing lost or repeated exactly once, reads resuming at the checkpointed
offsets whatever the starting options say, and data loss (records deleted, a topic created
again) reported naming topic, partition and offsets, or read past with failOnDataLoss false.

On the fake cluster (on a thread): it deletes records and topics, adds partitions, and lists
aborted transactions in Fetch, so a read_committed read shows what an exactly-once sink made
visible (Tansu lacks DeleteRecords and CreatePartitions and lists no aborted transactions).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql.functions import col, udf

from kafkawire.admin import Admin
from kafkawire.client import KafkaClient
from kafkawire.cluster import TopicPartition
from kafkawire.testing.pytest_plugin import Broker

from .conftest import fill, new_topic, start_copy

_READ_COMMITTED = 1
_HOLD_POLLS = 400  # a held task waits at most 400 x 50 ms for the test to let it go


def _start(
    spark: SparkSession, bootstrap: str, source: str, sink: str, checkpoint: Path, **how: Any
) -> Any:
    """A copy of ``source`` to ``sink`` (conftest.start_copy), a micro-batch every 50 ms."""
    return start_copy(
        spark,
        bootstrap,
        source,
        sink,
        checkpoint,
        trigger={"processingTime": "50 milliseconds"},
        **how,
    )


def _drain(query: Any) -> Any:
    """Let ``query`` process all that is there, then stop it."""
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    return query


def _visible(bootstrap: str, topic: str) -> list[tuple[bytes, bytes]]:
    return _read(bootstrap, topic, _READ_COMMITTED)


def _admin(bootstrap: str, change: Callable[[Admin], Awaitable[Any]]) -> None:
    async def run() -> None:
        async with Admin(bootstrap) as admin:
            await change(admin)

    asyncio.run(run())


def _topics(bootstrap: str, records: int, partitions: int = 1) -> tuple[str, str, list[Any]]:
    source, sink = new_topic(), new_topic()
    written = fill(bootstrap, source, records, partitions=partitions)
    fill(bootstrap, sink, 0, partitions=1)
    return source, sink, written


def test_a_first_batch_run_again_starts_where_it_started(
    spark: SparkSession, fake_broker: Broker, tmp_path: Path
) -> None:
    """startingOffsets "latest" (a stream's default) is where the stream stood when it
    started, also when its first batch runs again after a restart: Spark's Kafka source keeps
    its starting offsets in the checkpoint; Spark asks a Python source's initialOffset again."""
    bootstrap = fake_broker.bootstrap
    source, sink, _ = _topics(bootstrap, 2)
    _drain(_start(spark, bootstrap, source, sink, tmp_path, read={"startingOffsets": "latest"}))
    # As if the query stopped before the checkpoint recorded batch 0 done: it runs again.
    for name in ("0", ".0.crc"):
        (tmp_path / "commits" / name).unlink()
    more = fill(bootstrap, source, 3, partitions=1, first=2)
    _drain(_start(spark, bootstrap, source, sink, tmp_path))  # startingOffsets earliest
    assert _visible(bootstrap, sink) == more


def _read(bootstrap: str, topic: str, isolation_level: int) -> list[tuple[bytes, bytes]]:
    """(key, value) of every record of ``topic``'s partition 0 a reader at that isolation
    level sees (read_committed: what an exactly-once sink made visible)."""

    async def run() -> list[tuple[bytes, bytes]]:
        async with KafkaClient(bootstrap) as client:
            records = client.records(
                topic, 0, 0, stop_at_end=True, max_wait_ms=10, isolation_level=isolation_level
            )
            return [(r.key or b"", r.value or b"") async for r in records]

    return asyncio.run(run())


class _Hold:
    """A UDF that holds the task reading ``victim`` (once: until ``release``) or fails it
    (once), so that a test stops or fails a query in the middle of a batch."""

    def __init__(self, directory: Path, victim: bytes, *, fail: bool) -> None:
        self.reached, self.released = directory / "reached", directory / "released"
        reached, released = str(self.reached), str(self.released)

        @udf("binary", useArrow=False)  # Arrow UDFs need pandas
        def hold(value: bytes) -> bytes:
            if value != victim or os.path.exists(released):
                return value
            Path(reached).touch()
            if fail:
                Path(released).touch()
                raise RuntimeError("the task's first attempt fails")
            for _ in range(_HOLD_POLLS):
                if os.path.exists(released):
                    break
                time.sleep(0.05)
            return value

        self.udf = hold

    def __call__(self, stream: Any) -> Any:
        return stream.withColumn("value", self.udf(col("value")))

    def wait(self, done: Callable[[], bool]) -> None:
        """Until the victim's task is held and ``done()``."""
        for _ in range(_HOLD_POLLS):
            if self.reached.exists() and done():
                return
            time.sleep(0.05)
        raise AssertionError("the held task was never reached")


@pytest.mark.parametrize("exactly_once", [False, True], ids=["at_least_once", "exactly_once"])
@pytest.mark.parametrize("how", ["stopped", "failed"])
def test_a_copy_broken_off_in_a_batch_loses_and_repeats_nothing_on_restart(
    spark: SparkSession, fake_broker: Broker, tmp_path: Path, how: str, exactly_once: bool
) -> None:
    """Batches of 4 records, 2 a partition; the task of partition 1 is held (stopped: the
    query stops while the task of partition 0 has written its part of the batch, in an open
    transaction exactly once) or fails once in the third batch; the restart runs it again."""
    bootstrap = fake_broker.bootstrap
    source, sink, written = _topics(bootstrap, 12, partitions=2)
    hold = _Hold(tmp_path, written[7][1], fail=how == "failed")  # partition 1's offset 3
    checkpoint = tmp_path / "checkpoint"

    def start() -> Any:
        return _start(
            spark,
            bootstrap,
            source,
            sink,
            checkpoint,
            limit=4,
            change=hold,
            exactlyOnce=str(exactly_once).lower(),
        )

    query = start()
    if how == "stopped":
        hold.wait(lambda: len(_read(bootstrap, sink, 0)) >= 6)  # batch 1, half of batch 2
        query.stop()
        hold.released.touch()
    else:
        with pytest.raises(StreamingQueryException, match="first attempt fails"):
            query.awaitTermination()
    _drain(start())
    visible = _visible(bootstrap, sink)
    if exactly_once:
        assert Counter(visible) == Counter(written)
        if how == "stopped":  # the open transaction was aborted, its records are in the log
            assert len(_read(bootstrap, sink, 0)) > len(visible)
    else:
        assert set(visible) == set(written)


def _records_deleted(bootstrap: str, source: str) -> list[tuple[bytes, bytes]]:
    """Records 4-9 written, 4-6 deleted; the records kept."""
    more = fill(bootstrap, source, 6, partitions=1, first=4)
    _admin(bootstrap, lambda admin: admin.delete_records({TopicPartition(source, 0): 7}))
    return more[3:]


def _created_again(bootstrap: str, source: str) -> list[tuple[bytes, bytes]]:
    """The topic deleted and created again with 3 records; those."""
    _admin(bootstrap, lambda admin: admin.delete_topics([source]))
    return fill(bootstrap, source, 3, partitions=1, first=100)


LOSSES = {  # what a stream at offset 4 of ``source``/0 finds on restart, and the error
    "records deleted": (_records_deleted, "{}/0: offsets 4-9 were to be read, but its first"),
    "topic created again": (_created_again, "{}/0: the log ends at 3, below the offset 4"),
}


@pytest.mark.parametrize("fail_on_data_loss", [True, False])
@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_a_restart_past_lost_records(
    spark: SparkSession, fake_broker: Broker, tmp_path: Path, loss: str, fail_on_data_loss: bool
) -> None:
    """failOnDataLoss true: the query fails naming topic, partition and offsets; false: it
    reads on from the first offset kept (a new log from its start), as Spark's Kafka source."""
    bootstrap = fake_broker.bootstrap
    source, sink, first = _topics(bootstrap, 4)
    option = {"failOnDataLoss": str(fail_on_data_loss).lower()}
    _drain(_start(spark, bootstrap, source, sink, tmp_path, read=option))
    lose, message = LOSSES[loss]
    kept = lose(bootstrap, source)
    query = _start(spark, bootstrap, source, sink, tmp_path, read=option)
    if fail_on_data_loss:
        with pytest.raises(StreamingQueryException, match=message.format(source)):
            query.awaitTermination()
        kept = []
    else:
        _drain(query)
    assert _visible(bootstrap, sink) == first + kept


def test_a_restart_reads_on_from_the_checkpoint_into_new_partitions_and_topics(
    spark: SparkSession, fake_broker: Broker, tmp_path: Path
) -> None:
    """The starting options of a restart are ignored (the timestamp would fail a stream that
    started there); partitions added to a topic and topics that now match the pattern are read
    from their first offset, as Spark's Kafka source reads them."""
    bootstrap = fake_broker.bootstrap
    base, sink = new_topic(), new_topic()
    first = fill(bootstrap, f"{base}-a", 2, partitions=1)
    fill(bootstrap, sink, 0, partitions=1)
    pattern = f"{base}-.*"
    _drain(_start(spark, bootstrap, pattern, sink, tmp_path))
    _admin(bootstrap, lambda admin: admin.create_partitions({f"{base}-a": 2}))
    grown = fill(bootstrap, f"{base}-a", 2, partitions=2, first=10, create=False)
    new = fill(bootstrap, f"{base}-b", 2, partitions=1, first=20)
    far = "99999999999999"  # no record that late: "error" fails a stream that starts there
    _drain(_start(spark, bootstrap, pattern, sink, tmp_path, read={"startingTimestamp": far}))
    assert Counter(_visible(bootstrap, sink)) == Counter(first + grown + new)
