"""Structured Streaming: kafkawire to kafkawire, trigger(availableNow=True) in bounded batches,
and a restart from the checkpoint that loses and repeats nothing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pyspark.sql import SparkSession

from kafkawire.testing.pytest_plugin import Broker

from .conftest import creates_topics, fill, new_topic, read_back, start_copy
from .streaming import run_to_end

LIMIT = 6


def _run_once(
    spark: SparkSession, bootstrap: str, source: str, sink: str, checkpoint: Path, *, limit: int
) -> list[int]:
    """One availableNow run; the number of input rows of each of its batches."""
    query = run_to_end(lambda: start_copy(spark, bootstrap, source, sink, checkpoint, limit=limit))
    assert query.exception() is None
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def test_available_now_in_bounded_batches_and_restart(
    spark: SparkSession, kafka_broker: Broker, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap
    source, sink = new_topic(), new_topic()
    # The mock cluster creates topics itself, with four partitions (and fewer, larger batches
    # keep its test short: each batch there takes about a second).
    create = creates_topics(kafka_broker)
    partitions, sink_partitions, limit = (2, 1, LIMIT) if create else (4, 4, 2 * LIMIT)
    first = fill(bootstrap, source, 20, partitions=partitions, create=create)
    fill(bootstrap, sink, 0, partitions=1, create=create)

    batches = _run_once(spark, bootstrap, source, sink, tmp_path, limit=limit)
    assert sum(batches) == 20
    assert len(batches) >= 20 // limit
    # Spark's rule: each partition with a backlog moves by at least one record.
    assert max(batches) <= limit + partitions - 1

    more = fill(bootstrap, source, 8, partitions=partitions, first=20, create=False)
    again = _run_once(spark, bootstrap, source, sink, tmp_path, limit=limit)
    assert sum(again) == len(more)

    written = Counter((k, v) for _, _, k, v in read_back(bootstrap, sink, sink_partitions))
    assert written == Counter(first + more)
