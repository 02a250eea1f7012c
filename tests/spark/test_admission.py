"""Positions by time and admission control, on the readers themselves (no Spark session).

The fake cluster answers ListOffsets by time as Kafka does (Tansu answers offset 0 and the mock
cluster -1, docs/design.md), so it serves these tests, on an event loop in a thread of its own
since the readers open their clients in event loops of their own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, ReadMinRows

from kafkawire.spark.offsets import OffsetRange
from kafkawire.spark.options import OptionError, read_options
from kafkawire.spark.source import BatchReader, StreamReader
from tests.net.secure_front import ThreadedSecureCluster

TOPIC = "times"


@pytest.fixture
def cluster() -> Iterator[ThreadedSecureCluster]:
    with ThreadedSecureCluster() as threaded:
        yield threaded


def _produce(cluster: ThreadedSecureCluster, partition: int, count: int, timestamp: int) -> None:
    async def produce() -> None:
        assert cluster.cluster is not None
        cluster.cluster.produce(TOPIC, partition, [b"x"] * count, timestamp=timestamp)

    cluster.call(produce)


def _create(cluster: ThreadedSecureCluster, partitions: int) -> None:
    async def create() -> None:
        assert cluster.cluster is not None
        cluster.cluster.create_topic(TOPIC, partitions=partitions)

    cluster.call(create)


def _ranges(cluster: ThreadedSecureCluster, **options: str) -> list[tuple[int, int, int]]:
    reader = BatchReader(
        read_options(
            {"kafka.bootstrap.servers": cluster.bootstrap, "subscribe": TOPIC, **options},
            streaming=False,
        )
    )
    found = [p.value for p in reader.partitions()]
    assert all(isinstance(r, OffsetRange) for r in found)
    return sorted((r.partition, r.start, r.end) for r in found)


def test_batch_reads_by_time(cluster: ThreadedSecureCluster) -> None:
    _create(cluster, 2)
    _produce(cluster, 0, 3, timestamp=1000)  # offsets 0-2
    _produce(cluster, 0, 2, timestamp=2000)  # offsets 3-4
    _produce(cluster, 1, 3, timestamp=1500)  # offsets 0-2
    assert _ranges(cluster, startingTimestamp="1200") == [(0, 3, 5), (1, 0, 3)]
    by_partition = '{"times": {"0": 0, "1": 1600}}'
    with pytest.raises(OptionError, match="times/1 has no record at or after the timestamp 1600"):
        _ranges(cluster, startingOffsetsByTimestamp=by_partition)
    latest = {"startingOffsetsByTimestampStrategy": "latest"}
    # times/1 starts at its end, 3: nothing to read there (an empty range is no task).
    assert _ranges(cluster, startingOffsetsByTimestamp=by_partition, **latest) == [(0, 0, 5)]
    # An end by time: the first offset at or after it (no record that late: the end).
    assert _ranges(cluster, endingTimestamp="1800") == [(0, 0, 3), (1, 0, 3)]
    ending = '{"times": {"0": 1000, "1": 1000}}'
    assert _ranges(cluster, endingOffsetsByTimestamp=ending) == [(0, 0, 0)]  # one empty task
    with pytest.raises(OptionError, match="name none for times/1"):
        _ranges(cluster, endingOffsetsByTimestamp='{"times": {"0": 1000}}')


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_min_offsets_per_trigger_waits_for_records_or_the_delay(
    cluster: ThreadedSecureCluster,
) -> None:
    _create(cluster, 1)
    options = read_options(
        {
            "kafka.bootstrap.servers": cluster.bootstrap,
            "subscribe": TOPIC,
            "startingOffsets": "earliest",
            "minOffsetsPerTrigger": "5",
            "maxOffsetsPerTrigger": "8",
            "maxTriggerDelay": "1m",
        },
        streaming=True,
    )
    clock = Clock()
    reader = StreamReader(options, clock=clock)
    limit = reader.getDefaultReadLimit()
    assert limit == ReadMinRows(5)
    # Batch 0 only resolves where the stream starts (StreamReader.initialOffset), whatever
    # the limits say.
    start = reader.latestOffset(reader.initialOffset(), limit)
    assert start == {TOPIC: {"0": 0}}
    _produce(cluster, 0, 2, timestamp=1)
    first = reader.latestOffset(start, limit)  # the first batch with records comes at once
    assert first == {TOPIC: {"0": 2}}
    _produce(cluster, 0, 4, timestamp=1)
    assert reader.latestOffset(first, limit) == first  # 4 wait: fewer than 5
    clock.now += 59
    assert reader.latestOffset(first, limit) == first
    _produce(cluster, 0, 6, timestamp=1)  # 10 wait: a batch, cut at maxOffsetsPerTrigger
    second = reader.latestOffset(first, limit)
    assert second == {TOPIC: {"0": 10}}
    assert reader.latestOffset(second, limit) == second  # 2 wait
    clock.now += 60  # maxTriggerDelay since the last batch: what waits goes
    assert reader.latestOffset(second, limit) == {TOPIC: {"0": 12}}


def test_available_now_ignores_the_minimum(cluster: ThreadedSecureCluster) -> None:
    _create(cluster, 1)
    _produce(cluster, 0, 2, timestamp=1)
    options = read_options(
        {
            "kafka.bootstrap.servers": cluster.bootstrap,
            "subscribe": TOPIC,
            "startingOffsets": "earliest",
            "minOffsetsPerTrigger": "100",
        },
        streaming=True,
    )
    reader = StreamReader(options)
    reader.prepareForTriggerAvailableNow()
    start = reader.latestOffset(reader.initialOffset(), ReadAllAvailable())
    assert reader.latestOffset(start, ReadAllAvailable()) == {TOPIC: {"0": 2}}
    without = StreamReader(read_options({**options_text(cluster)}, streaming=True))
    assert without.getDefaultReadLimit() == ReadAllAvailable()
    capped = read_options({**options_text(cluster), "maxOffsetsPerTrigger": "3"}, streaming=True)
    assert StreamReader(capped).getDefaultReadLimit() == ReadMaxRows(3)


def options_text(cluster: ThreadedSecureCluster) -> dict[str, str]:
    return {"kafka.bootstrap.servers": cluster.bootstrap, "subscribe": TOPIC}
