"""Building a Produce request at the version a broker takes, for any number of partitions.

Shared by :meth:`KafkaClient.produce` and the producer's sender. Produce names topics by
name up to v12 and by topic id from v13; a topic whose id the metadata did not give (a broker
without topic ids) can only be produced to at v12 or older, so the version follows what is
known. Fetch names topics the same way (:mod:`.fetch_request`).
"""

from __future__ import annotations

import dataclasses
import functools
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from kafkawire.messages import request_type
from kafkawire.messages.produce import v13 as produce_latest
from kafkawire.protocol import struct_type

__all__ = [
    "LAST_VERSION_WITH_TOPIC_NAMES",
    "PRODUCE",
    "produce_request",
    "produce_version",
    "topic_naming",
]

LAST_VERSION_WITH_TOPIC_NAMES = 12  # Produce and Fetch address topics by id from v13
PRODUCE = produce_latest.ProduceRequest.__api_key__


def produce_version(broker_version: int, topic_ids: Sequence[uuid.UUID | None]) -> int:
    """The version to produce at: the broker's best, unless a topic lacks an id."""
    if any(topic_id is None for topic_id in topic_ids):
        return min(broker_version, LAST_VERSION_WITH_TOPIC_NAMES)
    return broker_version


def produce_request(
    version: int,
    data: Mapping[str, Sequence[tuple[int, bytes]]],
    *,
    topic_ids: Mapping[str, uuid.UUID | None],
    acks: int,
    timeout_ms: int,
    transactional_id: str | None = None,
) -> Any:
    """A ProduceRequest at ``version`` carrying ``data``: topic -> [(partition, records)]."""
    request_cls, topic_cls, partition_cls, naming = _classes(version)
    topics = []
    for topic, partitions in data.items():
        topics.append(
            topic_cls(
                **{naming: topic if naming != "topic_id" else topic_ids[topic]},
                partition_data=tuple(
                    partition_cls(index=index, records=records) for index, records in partitions
                ),
            )
        )
    options: dict[str, Any] = {"acks": acks, "timeout_ms": timeout_ms, "topic_data": tuple(topics)}
    if transactional_id is not None:
        options["transactional_id"] = transactional_id
    return request_cls(**options)


@functools.cache
def _classes(version: int) -> tuple[type[Any], type[Any], type[Any], str]:
    """A Produce version's request, topic and partition classes, and the field that names a
    topic: looked up once per version, for the producer builds a request per batch."""
    request_cls = request_type(PRODUCE, version)
    topic_cls = struct_type(request_cls, "topic_data")
    [naming] = topic_naming(topic_cls, "", None)
    return request_cls, topic_cls, struct_type(topic_cls, "partition_data"), naming


def topic_naming(topic_cls: type[Any], name: str, topic_id: uuid.UUID | None) -> dict[str, Any]:
    """How a Produce or Fetch topic struct of some version names its topic: by name (``name``
    or ``topic``) up to v12, by ``topic_id`` after."""
    fields = {f.name for f in dataclasses.fields(topic_cls)}
    named = {"name": name, "topic": name, "topic_id": topic_id}
    return {k: v for k, v in named.items() if k in fields}
