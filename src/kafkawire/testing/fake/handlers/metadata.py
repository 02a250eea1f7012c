"""Metadata (v0-13): brokers, topics, partitions with leaders, epochs and replicas.

As Kafka answers: the running brokers only; an unknown topic is created when both the request
(v4+; always before) and the cluster allow it, and answered LEADER_NOT_AVAILABLE that time
(Kafka creates it in the background; here the next Metadata has it); otherwise
UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION for a name Kafka refuses, or
UNKNOWN_TOPIC_ID for an unknown id (v12+ ask by id). A partition without a leader is
LEADER_NOT_AVAILABLE; replicas on stopped brokers are out of the ISR and listed offline.
"""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.build import build, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.state import INTERNAL_TOPICS, ClusterState, Topic, invalid_topic_name

from .common import NO_TOPIC_ID, response_for

__all__ = ["handle"]

_NO_OPERATIONS = -(2**31)  # "not asked"


async def handle(call: Call) -> Any:
    state = call.state
    cls = response_for(call)
    request = call.request
    topic_cls = part(cls, "topics")
    if request.topics is None or (call.version == 0 and not request.topics):
        topics = [_describe(topic_cls, state, t) for t in state.by_name.values()]
    else:
        auto_create = state.config.auto_create_topics and getattr(
            request, "allow_auto_topic_creation", True
        )
        topics = []
        for asked in _unique(request.topics):
            topics.append(_answer(topic_cls, state, asked, auto_create=auto_create))
    broker_cls = part(cls, "brokers")
    running = state.node_ids()
    brokers = tuple(
        build(
            broker_cls, node_id=node, host=state.brokers[node].host, port=state.brokers[node].port
        )
        for node in running
    )
    return build(
        cls,
        brokers=brokers,
        cluster_id=state.config.cluster_id,
        controller_id=min(running, default=-1),
        topics=tuple(topics),
        cluster_authorized_operations=_NO_OPERATIONS,
    )


def _unique(asked: Any) -> list[Any]:
    seen: set[Any] = set()
    unique = []
    for topic in asked:
        key = (topic.name, getattr(topic, "topic_id", NO_TOPIC_ID))
        if key not in seen:
            seen.add(key)
            unique.append(topic)
    return unique


def _answer(topic_cls: type[Any], state: ClusterState, asked: Any, *, auto_create: bool) -> Any:
    topic_id = getattr(asked, "topic_id", NO_TOPIC_ID)
    if topic_id != NO_TOPIC_ID:
        found = state.by_id.get(topic_id)
        if found is None:
            return build(topic_cls, error_code=Error.UNKNOWN_TOPIC_ID, name=None, topic_id=topic_id)
        return _describe(topic_cls, state, found)
    name = asked.name or ""
    found = state.by_name.get(name)
    if found is not None:
        return _describe(topic_cls, state, found)
    if invalid_topic_name(name) is not None:
        return build(topic_cls, error_code=Error.INVALID_TOPIC_EXCEPTION, name=name)
    if not auto_create:
        return build(topic_cls, error_code=Error.UNKNOWN_TOPIC_OR_PARTITION, name=name)
    created = state.create_topic(name, state.config.default_partitions)
    return build(
        topic_cls, error_code=Error.LEADER_NOT_AVAILABLE, name=name, topic_id=created.topic_id
    )


def _describe(topic_cls: type[Any], state: ClusterState, topic: Topic) -> Any:
    partition_cls = part(topic_cls, "partitions")
    partitions = []
    for p in topic.partitions:
        running = [n for n in p.replicas if state.brokers[n].running]
        partitions.append(
            build(
                partition_cls,
                error_code=Error.LEADER_NOT_AVAILABLE if p.leader < 0 else Error.NONE,
                partition_index=p.index,
                leader_id=p.leader,
                leader_epoch=p.leader_epoch,
                replica_nodes=tuple(p.replicas),
                isr_nodes=tuple(running),
                offline_replicas=tuple(n for n in p.replicas if n not in running),
            )
        )
    return build(
        topic_cls,
        error_code=Error.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.name in INTERNAL_TOPICS,
        partitions=tuple(partitions),
        topic_authorized_operations=_NO_OPERATIONS,
    )
