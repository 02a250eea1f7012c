"""Batch writes through Spark, read back with the plain client."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

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
