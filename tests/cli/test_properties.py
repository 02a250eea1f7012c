"""Java's .properties format, as --command-config reads it."""

from __future__ import annotations

import pytest

from kafkawire.cli._properties import parse_properties

CONFLUENT_CLOUD = r"""
# Required connection configs for Kafka producer, consumer, and admin
bootstrap.servers=pkc-00000.europe-west1.gcp.confluent.cloud:9092
security.protocol=SASL_SSL
sasl.mechanisms=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
    username='KEY' \
    password='S3CR\=T';
! Best practice for higher availability in Apache Kafka clients prior to 3.0
session.timeout.ms=45000
"""


def test_a_confluent_cloud_client_properties_file() -> None:
    assert parse_properties(CONFLUENT_CLOUD, "client.properties") == {
        "bootstrap.servers": "pkc-00000.europe-west1.gcp.confluent.cloud:9092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "PLAIN",
        "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required"
        " username='KEY' password='S3CR=T';",
        "session.timeout.ms": "45000",
    }


@pytest.mark.parametrize(
    ("line", "key", "value"),
    [
        ("a=b", "a", "b"),
        ("a : b", "a", "b"),
        ("a b c", "a", "b c"),
        ("a=", "a", ""),
        (r"a\ b\=c=d\te", "a b=c", "d\te"),
        (r"path=C:\\ssl\\ca.pem", "path", r"C:\ssl\ca.pem"),
        (r"u=caf\u00e9", "u", "café"),
        ("a=ends with a backslash \\\\", "a", "ends with a backslash \\"),
    ],
)
def test_lines(line: str, key: str, value: str) -> None:
    assert parse_properties(line, "f") == {key: value}


def test_a_bad_escape_names_the_line_not_its_text() -> None:
    with pytest.raises(ValueError, match=r"^f, line 2: a \\u escape needs four hex digits$"):
        parse_properties("a=1\npassword=se\\ucret", "f")
