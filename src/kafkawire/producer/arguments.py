"""What :meth:`Producer.send <.producer.Producer.send>` and ``send_batch`` refuse at once,
naming the argument: keys and values that are not bytes (without a serializer), a partition
that is not one of the topic's, a topic name no broker can hold, headers of the wrong shape."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kafkawire.cluster import InvalidPartitionError
from kafkawire.errors import InvalidTopicError
from kafkawire.records import Header, HeaderInput

__all__ = ["check_headers", "check_topic_name", "checked_partition", "serialize"]

_BYTES = (bytes, bytearray, memoryview)
# Kafka's rule for topic names (Java's org.apache.kafka.common.internals.Topic).
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")


def serialize(serializer: Any, value: Any, what: str) -> bytes | None:
    if serializer is not None:
        value = serializer(value)
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise TypeError(
        f"send(): the {what} is {type(value).__name__}, not bytes or None; encode it or "
        f"give the producer a {what}_serializer"
    )


def checked_partition(
    topic: str, partition: Any, count: int, *, named: str = "send(): partition"
) -> int:
    """``partition`` if it is one of the topic's (an int, not a bool), else the error (the
    argument ``named`` so)."""
    if not isinstance(partition, int) or isinstance(partition, bool):
        raise TypeError(f"{named} must be an int or None, not {partition!r}")
    if not 0 <= partition < count:
        raise InvalidPartitionError(
            f"topic {topic!r} has {count} partitions (0-{count - 1}): "
            f"partition {partition} does not exist"
        )
    return int(partition)


def check_topic_name(topic: str) -> None:
    """Refuse, as Kafka's Java client does, a name no broker can hold."""
    if _LEGAL_TOPIC.fullmatch(topic) is None or topic in (".", ".."):
        raise InvalidTopicError(
            f"topic {topic!r} is not a legal name: 1 to 249 characters of ASCII letters, "
            "digits, '.', '_' and '-', and not '.' or '..'"
        )


def check_headers(headers: Sequence[HeaderInput]) -> Sequence[HeaderInput]:
    if not isinstance(headers, list | tuple):
        raise TypeError(
            "send(): headers must be a list of (str, bytes or None) pairs or Header values, "
            f"not {type(headers).__name__}"
        )
    for index, header in enumerate(headers):
        if isinstance(header, Header):
            continue
        name, data = header if isinstance(header, tuple) and len(header) == 2 else (None, None)
        if not isinstance(name, str) or not (data is None or isinstance(data, _BYTES)):
            raise TypeError(
                f"send(): headers[{index}] must be a (str, bytes or None) pair or a Header, "
                f"not {header!r}"
            )
    return headers
