"""Building a Fetch request for many partitions of one leader, at the version it takes.

Shared by the fetcher and by end-offset lookups. Fetch names topics by name up to v12 and by
topic id from v13; a topic whose id the metadata did not give caps the version at 12, as for
Produce. Fetch sessions (KIP-227) are not used: each request is a full one (session id 0,
epoch -1), so a broker keeps no state for this consumer between requests.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from kafkawire.client.produce import produce_version, topic_naming
from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.messages import request_type
from kafkawire.messages.fetch import v18 as fetch_latest
from kafkawire.protocol import convert, struct_type

__all__ = ["FETCH", "FetchPlan", "build_fetch", "topic_of"]

FETCH = 1


@dataclasses.dataclass(frozen=True, slots=True)
class FetchPlan:
    """One Fetch request and what it takes to read its answer."""

    request: Any
    names: dict[uuid.UUID, str]  # topic id -> name, for responses of v13+


async def build_fetch(
    cluster: Cluster,
    leader: int,
    offsets: Mapping[TopicPartition, int],
    *,
    max_wait_ms: int,
    min_bytes: int,
    max_bytes: int,
    partition_max_bytes: int,
    isolation_level: int,
) -> FetchPlan:
    """A FetchRequest to ``leader`` for ``offsets`` (partition -> fetch offset)."""
    metadata = cluster.current_metadata or await cluster.metadata()
    ids = {tp.topic: metadata.topics[tp.topic].topic_id for tp in offsets}
    version = produce_version(await cluster.versions_for(leader, FETCH), list(ids.values()))
    topic_cls = struct_type(request_type(FETCH, version), "topics")
    partition_cls = struct_type(topic_cls, "partitions")
    by_topic: dict[str, list[Any]] = {}
    for tp, offset in offsets.items():
        by_topic.setdefault(tp.topic, []).append(
            partition_cls(
                partition=tp.partition,
                fetch_offset=offset,
                partition_max_bytes=partition_max_bytes,
            )
        )
    options = fetch_latest.FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        isolation_level=isolation_level,
    )
    topics = tuple(
        topic_cls(**topic_naming(topic_cls, name, ids[name]), partitions=tuple(parts))
        for name, parts in by_topic.items()
    )
    names = {topic_id: name for name, topic_id in ids.items() if topic_id is not None}
    return FetchPlan(dataclasses.replace(convert(options, version), topics=topics), names)


def topic_of(answer: Any, names: Mapping[uuid.UUID, str]) -> str | None:
    """The name of the topic a FetchResponse topic answers (by name, or by id from v13)."""
    name = getattr(answer, "topic", None)
    return name if name else names.get(getattr(answer, "topic_id", None))  # type: ignore[arg-type]


def answered(response: Any, names: Mapping[uuid.UUID, str]) -> Sequence[tuple[str, Any]]:
    """``(topic, partition data)`` for every partition the response answers."""
    out = []
    for topic in response.responses:
        name = topic_of(topic, names)
        if name is not None:
            out += [(name, p) for p in topic.partitions]
    return out
