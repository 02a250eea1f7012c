"""Batch writes through Spark, read back with the plain client."""

from __future__ import annotations

import asyncio

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from kafkawire.producer import Producer, partition_for_key
from kafkawire.spark.options import write_options
from kafkawire.spark.writing import send_all
from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.pytest_plugin import Broker

from .conftest import creates_topics, fill, new_topic, read_back


def test_write_then_read_back(spark: SparkSession, kafka_broker: Broker) -> None:
    topic = new_topic()
    # Two partitions (the mock cluster makes four when the first record arrives).
    fill(kafka_broker.bootstrap, topic, 0, create=creates_topics(kafka_broker))
    rows = [(f"k{i}", f"v{i}".encode(), i % 2) for i in range(50)]
    df = spark.createDataFrame(rows, "key string, value binary, partition int")
    (
        df.write.format("kafkawire")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap)
        .option("topic", topic)
        .mode("append")
        .save()
    )
    got = read_back(kafka_broker.bootstrap, topic, 2)
    assert sorted((p, k, v) for p, _, k, v in got) == sorted((p, k.encode(), v) for k, v, p in rows)


def test_topic_column_and_headers(spark: SparkSession, tansu_broker: Broker) -> None:
    topic = new_topic()
    fill(tansu_broker.bootstrap, topic, 0, partitions=1)
    df = spark.createDataFrame(
        [(topic, b"one", [("trace", b"1")])],
        "topic string, value binary, headers array<struct<key: string, value: binary>>",
    )
    df.write.format("kafkawire").option("kafka.bootstrap.servers", tansu_broker.bootstrap).mode(
        "append"
    ).save()
    back = spark.read.format("kafkawire").options(
        **{"kafka.bootstrap.servers": tansu_broker.bootstrap, "subscribe": topic}
    )
    row = back.option("includeHeaders", "true").load().collect()[0]
    assert (bytes(row.value), [(h.key, bytes(h.value)) for h in row.headers]) == (
        b"one",
        [("trace", b"1")],
    )


def test_overwrite_and_missing_value_are_refused(spark: SparkSession, tansu_broker: Broker) -> None:
    df = spark.createDataFrame([("x",)], "key string")
    writer = df.write.format("kafkawire").option("kafka.bootstrap.servers", tansu_broker.bootstrap)
    with pytest.raises(Exception, match="needs a value column"):
        writer.option("topic", "t").mode("append").save()
    valued = spark.createDataFrame([(b"x",)], "value binary").write.format("kafkawire")
    with pytest.raises(Exception, match=r"mode\(\"append\"\)"):
        valued.option("kafka.bootstrap.servers", tansu_broker.bootstrap).option("topic", "t").mode(
            "overwrite"
        ).save()


def test_a_record_the_brokers_cannot_take_fails_the_write(
    spark: SparkSession, tansu_broker: Broker
) -> None:
    topic = new_topic()
    fill(tansu_broker.bootstrap, topic, 0, partitions=1)
    df = spark.createDataFrame([(b"x", 7)], "value binary, partition int")
    with pytest.raises(Exception, match="partition 7 does not exist"):
        df.write.format("kafkawire").option(
            "kafka.bootstrap.servers", tansu_broker.bootstrap
        ).option("topic", topic).mode("append").save()


async def test_the_task_sends_each_arrow_batch_by_topic_with_its_columns_in_place(
    fake_cluster: FakeCluster,
) -> None:
    """The task code alone (no Spark): a topic column naming two topics, string keys,
    partitions with nulls (chosen by key there), headers; two Arrow batches in turn."""
    for topic in ("a", "b"):
        fake_cluster.create_topic(topic, partitions=3)
    rows = 30
    batch = pa.RecordBatch.from_pydict(
        {
            "topic": ["a" if i % 3 else "b" for i in range(rows)],
            "key": pa.array([f"k{i}" for i in range(rows)], pa.string()),
            "value": pa.array([b"v%d" % i for i in range(rows)], pa.binary()),
            "partition": pa.array([None if i % 2 else i % 3 for i in range(rows)], pa.int32()),
            "headers": pa.array(
                [[{"key": "h", "value": b"%d" % i}] if i % 4 else None for i in range(rows)],
                pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])),
            ),
        }
    )
    options = write_options({"kafka.bootstrap.servers": fake_cluster.bootstrap})
    async with Producer(fake_cluster.bootstrap, linger_ms=1) as producer:
        written = await asyncio.wait_for(send_all(producer, options, iter([batch, batch])), 10)
    assert written == 2 * rows
    for topic in ("a", "b"):
        got = sorted(
            (r.value, p, tuple((h.key, h.value) for h in r.headers))
            for p in range(3)
            for r in fake_cluster.records(topic, p)
        )
        mine = [i for i in range(rows) if (i % 3 == 0) == (topic == "b")]
        expected = [
            (
                b"v%d" % i,
                partition_for_key(b"k%d" % i, 3) if i % 2 else i % 3,
                (("h", b"%d" % i),) if i % 4 else (),
            )
            for i in mine
        ]
        assert got == sorted(expected * 2)
