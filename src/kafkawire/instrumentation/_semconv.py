"""What OpenTelemetry's messaging semantic conventions call Kafka's spans, attributes and
metrics, and which naming of spans to follow.

Attributes and metrics are those of the current conventions (``messaging.operation.name``,
``messaging.kafka.offset``, ``messaging.consumer.group.name``, ...). Span names and kinds
changed after version 1.24, and the conventions ask instrumentations to keep the old ones
until the messaging conventions are stable, switching with ``OTEL_SEMCONV_STABILITY_OPT_IN``.
By default, then, spans are named as the Java agent and the Python contrib instrumentations
of aiokafka and kafka-python name them: ``"{topic} send"`` (PRODUCER), ``"{topic} receive"``
and ``"{topic} process"`` (CONSUMER). With ``messaging`` (or ``messaging/dup``) in
``OTEL_SEMCONV_STABILITY_OPT_IN``, the current ones: ``"send {topic}"``, ``"receive
{topic}"``, ``"process {topic}"``, and a receive span is CLIENT (the application asked).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import SpanKind

from kafkawire.cluster import parse_bootstrap

__all__ = [
    "BATCH_MESSAGE_COUNT",
    "CLIENT_ID",
    "CONSUMER_GROUP",
    "DESTINATION",
    "DURATION_BUCKETS",
    "ERROR_TYPE",
    "KAFKA_KEY",
    "KAFKA_OFFSET",
    "KAFKA_TOMBSTONE",
    "OPERATION_NAME",
    "OPERATION_TYPE",
    "PARTITION",
    "PROCESS",
    "RECEIVE",
    "SEND",
    "SERVER_ADDRESS",
    "SERVER_PORT",
    "SYSTEM",
    "Naming",
    "client_attributes",
    "error_type",
    "key_attribute",
]

SYSTEM = "messaging.system"
OPERATION_NAME = "messaging.operation.name"
OPERATION_TYPE = "messaging.operation.type"
DESTINATION = "messaging.destination.name"
PARTITION = "messaging.destination.partition.id"
CONSUMER_GROUP = "messaging.consumer.group.name"
CLIENT_ID = "messaging.client.id"
BATCH_MESSAGE_COUNT = "messaging.batch.message_count"
KAFKA_KEY = "messaging.kafka.message.key"
KAFKA_OFFSET = "messaging.kafka.offset"
KAFKA_TOMBSTONE = "messaging.kafka.message.tombstone"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

# The operations, each named as its type (Kafka's conventions name no others for these).
SEND = "send"
RECEIVE = "receive"
PROCESS = "process"

# messaging.client.operation.duration's and messaging.process.duration's advised buckets (s).
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)

_OPT_IN = "OTEL_SEMCONV_STABILITY_OPT_IN"


@dataclass(frozen=True, slots=True)
class Naming:
    """How spans are named and which kind a receive span has (see the module's docstring)."""

    current: bool = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> Naming:
        chosen = {value.strip() for value in environ.get(_OPT_IN, "").split(",")}
        return cls(current=bool(chosen & {"messaging", "messaging/dup"}))

    def span_name(self, operation: str, topic: str | None) -> str:
        """The span's name; without a topic (a receive of several), the operation's alone."""
        if topic is None:
            return operation
        return f"{operation} {topic}" if self.current else f"{topic} {operation}"

    @property
    def receive_kind(self) -> SpanKind:
        return SpanKind.CLIENT if self.current else SpanKind.CONSUMER


def client_attributes(settings: Any) -> dict[str, Any]:
    """What every span and metric of one client carries: the system, its group (a
    consumer's, if it has one) and the first bootstrap server, as the broker it talks to
    (the leader of each partition would make every attribute set per partition)."""
    host, port = parse_bootstrap(settings.bootstrap_servers)[0]
    attributes: dict[str, Any] = {
        SYSTEM: "kafka",
        SERVER_ADDRESS: host,
        SERVER_PORT: port,
    }
    group = getattr(settings, "group_id", None)
    if group is not None:
        attributes[CONSUMER_GROUP] = group
    return attributes


def key_attribute(key: object) -> str | None:
    """``messaging.kafka.message.key``: a key with one canonical string form (a str, UTF-8
    bytes, an int), else none, as the conventions ask."""
    if isinstance(key, str):
        return key
    if isinstance(key, bytes):
        try:
            return key.decode()
        except UnicodeDecodeError:
            return None
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    return None


def error_type(error: BaseException) -> str:
    """``error.type``: the error's class name (low cardinality; not its module, which is
    where the class is defined, not where it is exported, and may move)."""
    return type(error).__qualname__
