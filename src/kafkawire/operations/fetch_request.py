"""Building Fetch requests for many partitions of one leader, at the version it takes, and
reading which partitions their answers name.

Shared by the consumer's fetcher (in a fetch session:
``kafkawire.consumer.fetching.fetch_session``), the end-offset confirmation of
:mod:`.list_offsets` and :meth:`KafkaClient.fetch` (one-shot, with no session). Fetch names
topics by name up to v12 and by topic id from v13; a topic whose id the metadata did not give
caps the version at 12, as for Produce. Fields a version lacks
are left out: the session (v7+), the partition's current leader epoch (v9+).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from kafkawire.cluster import Cluster, ClusterMetadata, TopicPartition
from kafkawire.messages import request_type
from kafkawire.messages.fetch import v18 as fetch_latest
from kafkawire.protocol import convert, struct_type

from .fanout import by_topic, per_topic
from .produce_request import produce_version, topic_naming

__all__ = [
    "FETCH",
    "FINAL_EPOCH",
    "NO_SESSION",
    "FetchOptions",
    "FetchPlan",
    "PartitionFetch",
    "answered",
    "build_fetch",
    "fetch_request",
    "fetch_version",
    "topic_names",
    "topic_of",
]

FETCH = fetch_latest.FetchRequest.__api_key__
NO_SESSION = 0  # the session id of a Fetch outside any session
FINAL_EPOCH = -1  # the session epoch of a full fetch that wants no session: one-shot fetches


@dataclasses.dataclass(frozen=True, slots=True)
class PartitionFetch:
    """What a Fetch asks of one partition; when any of it changes, a fetch session sends the
    partition again."""

    fetch_offset: int
    current_leader_epoch: int
    max_bytes: int


@dataclasses.dataclass(frozen=True, slots=True)
class FetchOptions:
    """What a Fetch asks of the broker as a whole."""

    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int


@dataclasses.dataclass(frozen=True, slots=True)
class FetchPlan:
    """One Fetch request and what it takes to read its answer."""

    request: Any
    names: dict[uuid.UUID, str]  # topic id -> name, for responses of v13+


async def fetch_version(
    cluster: Cluster, leader: int, topics: Collection[str]
) -> tuple[int, dict[str, uuid.UUID | None]]:
    """The Fetch version to send ``leader`` for ``topics``, and the topics' ids."""
    metadata = cluster.current_metadata or await cluster.metadata()
    ids = {topic: metadata.topics[topic].topic_id for topic in topics}
    return produce_version(await cluster.versions_for(leader, FETCH), list(ids.values())), ids


def fetch_request(
    version: int,
    topic_ids: Mapping[str, uuid.UUID | None],
    partitions: Mapping[TopicPartition, PartitionFetch],
    options: FetchOptions,
    *,
    session_id: int = NO_SESSION,
    session_epoch: int = FINAL_EPOCH,
    forgotten: Collection[TopicPartition] = (),
) -> FetchPlan:
    """A FetchRequest at ``version`` for ``partitions``, in a session (or none: the defaults)."""
    request_cls = request_type(FETCH, version)
    topic_cls = struct_type(request_cls, "topics")
    partition_cls = struct_type(topic_cls, "partitions")
    topics = per_topic(
        partitions,
        lambda name, parts: topic_cls(
            **topic_naming(topic_cls, name, topic_ids[name]), partitions=parts
        ),
        lambda tp, fetch: partition_cls(
            partition=tp.partition,
            fetch_offset=fetch.fetch_offset,
            partition_max_bytes=fetch.max_bytes,
            **_if_present(partition_cls, current_leader_epoch=fetch.current_leader_epoch),
        ),
    )
    request = dataclasses.replace(
        convert(
            fetch_latest.FetchRequest(
                max_wait_ms=options.max_wait_ms,
                min_bytes=options.min_bytes,
                max_bytes=options.max_bytes,
                isolation_level=options.isolation_level,
                session_id=session_id,
                session_epoch=session_epoch,
            ),
            version,
        ),
        topics=topics,
    )
    if forgotten:
        request = dataclasses.replace(
            request, forgotten_topics_data=_forgotten(request_cls, topic_ids, forgotten)
        )
    names = {topic_id: name for name, topic_id in topic_ids.items() if topic_id is not None}
    return FetchPlan(request, names)


def _forgotten(
    request_cls: type[Any],
    topic_ids: Mapping[str, uuid.UUID | None],
    forgotten: Collection[TopicPartition],
) -> tuple[Any, ...]:
    forgotten_cls = struct_type(request_cls, "forgotten_topics_data")
    return tuple(
        forgotten_cls(**topic_naming(forgotten_cls, name, topic_ids[name]), partitions=tuple(ps))
        for name, ps in by_topic(forgotten).items()
    )


def _if_present(cls: type[Any], **values: Any) -> dict[str, Any]:
    """Those of ``values`` that ``cls`` (a struct of some version) has fields for."""
    fields = {f.name for f in dataclasses.fields(cls)}
    return {name: value for name, value in values.items() if name in fields}


async def build_fetch(
    cluster: Cluster,
    leader: int,
    offsets: Mapping[TopicPartition, int],
    options: FetchOptions,
    *,
    partition_max_bytes: int,
) -> FetchPlan:
    """A one-shot FetchRequest (no session, no leader epochs) to ``leader`` for ``offsets``
    (partition -> fetch offset)."""
    version, ids = await fetch_version(cluster, leader, {tp.topic for tp in offsets})
    wanted = {tp: PartitionFetch(offset, -1, partition_max_bytes) for tp, offset in offsets.items()}
    return fetch_request(version, ids, wanted, options)


def topic_names(
    metadata: ClusterMetadata | None, partitions: Iterable[TopicPartition]
) -> dict[uuid.UUID, str]:
    """Topic id -> name of the topics of ``partitions`` that ``metadata`` knows by id: what
    reads the answer to a Fetch that named them by id (v13+)."""
    topics = metadata.topics if metadata is not None else {}
    ids = {tp.topic: topics[tp.topic].topic_id for tp in partitions if tp.topic in topics}
    return {topic_id: name for name, topic_id in ids.items() if topic_id is not None}


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
