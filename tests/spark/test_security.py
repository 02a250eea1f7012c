"""Spark reads and writes a SASL_SSL cluster with Spark's Kafka source options for it.

The cluster is the fake cluster behind the TLS and SASL front of ``tests/net`` (a throwaway CA,
SCRAM-SHA-512), on an event loop in a thread; the options are the ``kafka.``-prefixed Java
settings a Spark job against Confluent Cloud or MSK carries. No plan, error or log shows the
password.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.net.pki import Pki
from tests.net.secure_front import ThreadedSecureCluster
from tests.net.secured import PASSWORD, WRONG_PASSWORD, jaas

from .conftest import new_topic


def _security(pki: Pki, password: str = PASSWORD) -> dict[str, str]:
    return {
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": jaas("SCRAM-SHA-512", password=password),
        "kafka.ssl.truststore.type": "PEM",
        "kafka.ssl.truststore.location": str(Path(pki.ca)),
    }


def test_write_then_read(
    spark: SparkSession, secured_cluster: ThreadedSecureCluster, pki: Pki
) -> None:
    topic = new_topic()
    rows = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(5)], "key string, value string")
    (
        rows.write.format("kafkawire")
        .mode("append")
        .option("kafka.bootstrap.servers", secured_cluster.bootstrap)
        .option("topic", topic)
        .options(**_security(pki))
        .save()
    )
    read = (
        spark.read.format("kafkawire")
        .option("kafka.bootstrap.servers", secured_cluster.bootstrap)
        .option("subscribe", topic)
        .options(**_security(pki))
        .load()
    )
    values = sorted(bytes(row.value).decode() for row in read.select("value").collect())
    assert values == [f"v{i}" for i in range(5)]
    assert secured_cluster.front is not None
    assert {s.principal for s in secured_cluster.front.sessions} == {"alice"}


def test_a_wrong_password_fails_the_query_and_no_secret_shows(
    spark: SparkSession,
    secured_cluster: ThreadedSecureCluster,
    pki: Pki,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    topic = new_topic()
    stream = (
        spark.readStream.format("kafkawire")
        .option("kafka.bootstrap.servers", secured_cluster.bootstrap)
        .option("subscribe", topic)
        .options(**_security(pki, WRONG_PASSWORD))
        .load()
    )
    stream.explain(True)  # a streaming plan lists its options, passwords redacted
    with pytest.raises(Exception, match="SASL SCRAM-SHA-512 authentication") as failure:
        (
            spark.read.format("kafkawire")
            .option("kafka.bootstrap.servers", secured_cluster.bootstrap)
            .option("subscribe", topic)
            .options(**_security(pki, WRONG_PASSWORD))
            .load()
            .collect()
        )
    # Every log record of this process but py4j's, which at DEBUG traces each call into the
    # JVM with its arguments: the user's own .option("kafka.sasl.jaas.config", ...) among
    # them. (kafkawire logs in Spark's Python workers; tests/net greps those records.)
    logged = [r.getMessage() for r in caplog.records if not r.name.startswith("py4j")]
    said = "\n".join([str(failure.value), capsys.readouterr().out, *logged])
    assert "kafka.sasl.jaas.config" in said  # the plan was printed
    assert WRONG_PASSWORD not in said
    assert PASSWORD not in said
