"""What several handlers share: finding a partition, Kafka's leader and epoch checks, hints."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kafkawire.testing.fake.build import build, nested, part, response_class
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.state import ClusterState, Partition, Topic

__all__ = [
    "HINTED_ERRORS",
    "NO_TOPIC_ID",
    "each_partition",
    "fenced",
    "find_topic",
    "leader_check",
    "leader_hint",
    "node_endpoints",
    "response_for",
    "unknown_topic",
]

NO_TOPIC_ID = uuid.UUID(int=0)


def response_for(call: Call) -> type[Any]:
    """The response class at the call's version."""
    return response_class(call.api_key, call.version)


def find_topic(state: ClusterState, name: str | None, topic_id: uuid.UUID | None) -> Topic | None:
    """A topic by id when one is given (not the zero id), else by name."""
    if topic_id is not None and topic_id != NO_TOPIC_ID:
        return state.by_id.get(topic_id)
    return state.by_name.get(name or "")


def unknown_topic(by_id: bool) -> Error:
    return Error.UNKNOWN_TOPIC_ID if by_id else Error.UNKNOWN_TOPIC_OR_PARTITION


def leader_check(partition: Partition, node_id: int, current_leader_epoch: int) -> Error:
    """Kafka's ``Partition.getLocalLog`` for a request that must reach the leader: the epoch the
    client knows against the partition's (older: FENCED_LEADER_EPOCH; newer:
    UNKNOWN_LEADER_EPOCH; -1: not checked), then whether this broker leads it."""
    if current_leader_epoch >= 0:
        if current_leader_epoch < partition.leader_epoch:
            return Error.FENCED_LEADER_EPOCH
        if current_leader_epoch > partition.leader_epoch:
            return Error.UNKNOWN_LEADER_EPOCH
    if partition.leader != node_id:
        return Error.NOT_LEADER_OR_FOLLOWER
    return Error.NONE


def each_partition(
    call: Call, answer: Callable[[str, Any], Mapping[str, Any]], *, topic_field: str = "name"
) -> tuple[Any, ...]:
    """The ``topics`` of a response that answers the request's ``topics`` partition by
    partition: ``answer(topic name, partition asked)`` gives each partition's field values."""
    topic_cls = part(response_for(call), "topics")
    partition_cls = part(topic_cls, "partitions")
    topics = []
    for asked in call.request.topics:
        name = getattr(asked, topic_field)
        partitions = tuple(build(partition_cls, **answer(name, p)) for p in asked.partitions)
        topics.append(build(topic_cls, **{topic_field: name}, partitions=partitions))
    return tuple(topics)


def fenced(error: Error, version: int, first_version: int) -> Error:
    """PRODUCER_FENCED as versions before KIP-588's (``first_version``) spell it."""
    if error is Error.PRODUCER_FENCED and version < first_version:
        return Error.INVALID_PRODUCER_EPOCH
    return error


HINTED_ERRORS = (Error.NOT_LEADER_OR_FOLLOWER, Error.FENCED_LEADER_EPOCH)


def leader_hint(cls: type[Any], partition: Partition | None, error: Error) -> Any:
    """The ``current_leader`` of a Produce or Fetch partition answer (KIP-951): who leads now,
    given with the errors that mean the client's leader is stale; the schema default else."""
    if partition is None or error not in HINTED_ERRORS or partition.leader < 0:
        return nested(cls, "current_leader")
    return nested(
        cls, "current_leader", leader_id=partition.leader, leader_epoch=partition.leader_epoch
    )


def node_endpoints(cls: type[Any], state: ClusterState, leaders: set[int]) -> tuple[Any, ...]:
    """The ``node_endpoints`` of a Produce or Fetch answer: the brokers its hints name."""
    endpoint = part(cls, "node_endpoints")
    return tuple(
        build(endpoint, node_id=node, host=state.brokers[node].host, port=state.brokers[node].port)
        for node in sorted(leaders)
        if node in state.brokers and node >= 0
    )
