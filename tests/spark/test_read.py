"""Batch reads through Spark: the schema of Spark's Kafka source, and each offset option."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from kafkawire.testing.pytest_plugin import Broker

from .conftest import fill, new_topic

# What Spark's own Kafka source declares (KafkaRecordToRowConverter), nullability included.
SPARK_KAFKA_SCHEMA = StructType(
    [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
)
HEADERS = StructField(
    "headers",
    ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())])),
)


def _read(spark: SparkSession, bootstrap: str, **options: str) -> Any:
    return (
        spark.read.format("kafkawire")
        .option("kafka.bootstrap.servers", bootstrap)
        .options(**options)
    )


@pytest.mark.parametrize("headers", [False, True])
def test_schema_is_that_of_sparks_kafka_source(
    spark: SparkSession, tansu_broker: Broker, headers: bool
) -> None:
    topic = new_topic()
    fill(tansu_broker.bootstrap, topic, 1)
    df = _read(spark, tansu_broker.bootstrap, subscribe=topic, includeHeaders=str(headers)).load()
    expected = [*SPARK_KAFKA_SCHEMA.fields, *([HEADERS] if headers else [])]
    assert [f.name for f in df.schema.fields] == [f.name for f in expected]
    for got, want in zip(df.schema.fields, expected, strict=True):
        assert (got.name, got.dataType, got.nullable) == (want.name, want.dataType, want.nullable)
    assert len(df.collect()) == 1


def test_reads_every_record_with_its_columns(spark: SparkSession, tansu_broker: Broker) -> None:
    topic = new_topic()
    before = int(time.time() * 1000) // 1000 * 1000
    written = fill(tansu_broker.bootstrap, topic, 10, headers=True)
    rows = _read(spark, tansu_broker.bootstrap, subscribe=topic, includeHeaders="true").load()
    got = sorted(rows.collect(), key=lambda r: (r.partition, r.offset))
    assert [(r.partition, r.offset) for r in got] == [(p, o) for p in (0, 1) for o in range(5)]
    assert sorted((bytes(r.key), bytes(r.value)) for r in got) == sorted(written)
    for r in got:
        assert r.topic == topic
        assert r.timestampType == 0
        assert r.timestamp.timestamp() * 1000 >= before
        assert [(h.key, bytes(h.value)) for h in r.headers] == [("h", bytes(r.key))]


def test_offset_options(spark: SparkSession, tansu_broker: Broker) -> None:
    topic = new_topic()
    fill(tansu_broker.bootstrap, topic, 20)  # ten records in each of two partitions

    def offsets(**options: str) -> list[tuple[int, int]]:
        df = _read(spark, tansu_broker.bootstrap, **options).load()
        return sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())

    everything = [(p, o) for p in (0, 1) for o in range(10)]
    assert offsets(subscribe=topic) == everything
    assert offsets(subscribe=topic, startingOffsets="earliest", endingOffsets="latest") == (
        everything
    )
    ranges = {"startingOffsets": json.dumps({topic: {"0": 3, "1": -2}})}
    ranges["endingOffsets"] = json.dumps({topic: {"0": 5, "1": -1}})
    assert offsets(subscribe=topic, **ranges) == [(0, 3), (0, 4)] + [(1, o) for o in range(10)]
    assign = json.dumps({topic: [1]})
    assert offsets(assign=assign, startingOffsets=json.dumps({topic: {"1": 8}})) == [
        (1, 8),
        (1, 9),
    ]
    pattern = topic.replace("spark-", "sp.rk-")
    assert offsets(subscribePattern=pattern) == everything
    assert offsets(subscribe=topic, startingTimestamp="0") == everything
    # Small pieces: the same records, read by more tasks.
    split = _read(spark, tansu_broker.bootstrap, subscribe=topic, maxRecordsPerPartition="3")
    assert split.load().rdd.getNumPartitions() == 8
    assert sorted(r.offset for r in split.load().collect()) == sorted(o for _, o in everything)


def test_reads_every_partition_of_the_mock_cluster(
    spark: SparkSession, mock_cluster: Broker
) -> None:
    # Three brokers: the partitions' leaders differ, and each task finds its own.
    topic = new_topic()
    written = fill(mock_cluster.bootstrap, topic, 12, partitions=4, create=False)
    df = _read(spark, mock_cluster.bootstrap, subscribe=topic).load()
    rows = df.select("key", "value", "partition", "offset").collect()
    assert sorted((bytes(r.key), bytes(r.value)) for r in rows) == sorted(written)
    assert sorted((r.partition, r.offset) for r in rows) == [
        (p, o) for p in range(4) for o in range(3)
    ]


def test_an_end_below_the_start_is_data_loss(spark: SparkSession, tansu_broker: Broker) -> None:
    topic = new_topic()
    fill(tansu_broker.bootstrap, topic, 4, partitions=1)
    beyond = json.dumps({topic: {"0": 9}})
    with pytest.raises(Exception, match="end offset 4 is below the start offset 9"):
        _read(
            spark, tansu_broker.bootstrap, subscribe=topic, startingOffsets=beyond
        ).load().collect()
    lenient = _read(
        spark,
        tansu_broker.bootstrap,
        subscribe=topic,
        startingOffsets=beyond,
        failOnDataLoss="false",
    )
    assert sorted(r.offset for r in lenient.load().collect()) == [0, 1, 2, 3]


def test_bad_options_are_refused_naming_the_option(
    spark: SparkSession, tansu_broker: Broker
) -> None:
    with pytest.raises(Exception, match="subscribe, subscribePattern and assign"):
        _read(spark, tansu_broker.bootstrap).load().collect()
    topic = new_topic()
    fill(tansu_broker.bootstrap, topic, 2, partitions=1)
    # Spark's own sources ignore an option they do not know; a misspelled start read it all.
    with pytest.raises(Exception, match=r"unknown option startingoffset .* startingOffsets"):
        _read(
            spark, tansu_broker.bootstrap, subscribe=topic, startingOffset="latest"
        ).load().collect()


def test_a_topic_that_does_not_exist_is_named(spark: SparkSession, tansu_broker: Broker) -> None:
    missing = new_topic()
    with pytest.raises(Exception, match=rf"the topic '{missing}' \(option subscribe\) does not"):
        _read(spark, tansu_broker.bootstrap, subscribe=missing).load().collect()
    # A pattern that matches no topic reads nothing, as Spark's Kafka source does.
    none = _read(spark, tansu_broker.bootstrap, subscribePattern=f"{missing}-.*").load()
    assert none.collect() == []
