"""CreateTopics, DeleteTopics and CreatePartitions, checked as Kafka's controller checks them.

A request naming a topic twice answers INVALID_REQUEST for it; ``validate_only`` checks
everything and changes nothing. The messages are Kafka's, so a client's error text reads the
same against the fake as against Kafka.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from kafkawire.testing.fake.build import build, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.state import ClusterState, invalid_topic_name
from kafkawire.testing.fake.topic_configs import TOPIC_DEFAULTS, unknown_keys

from .common import NO_TOPIC_ID, response_for

__all__ = ["create_partitions", "create_topics", "delete_topics"]

_DYNAMIC_TOPIC_CONFIG = 1
_DEFAULT_CONFIG = 5

Failure = tuple[Error, str]


def _duplicates(names: list[str | None]) -> set[str | None]:
    return {name for name, count in Counter(names).items() if count > 1}


# -- CreateTopics ----------------------------------------------------------------------------


async def create_topics(call: Call) -> Any:
    state = call.state
    cls = response_for(call)
    result_cls = part(cls, "topics")
    request = call.request
    validate_only = getattr(request, "validate_only", False)
    twice = _duplicates([t.name for t in request.topics])
    results = []
    for asked in request.topics:
        if asked.name in twice:
            results.append(
                _refused(result_cls, asked.name, Error.INVALID_REQUEST, "Duplicate topic name.")
            )
            continue
        failure = _check_topic(state, asked)
        if failure is not None:
            results.append(_refused(result_cls, asked.name, *failure))
            continue
        configs = {c.name: c.value for c in asked.configs}
        assignments = {a.partition_index: list(a.broker_ids) for a in asked.assignments}
        partitions = len(assignments) or _or_default(
            asked.num_partitions, state.config.default_partitions
        )
        factor = (
            len(next(iter(assignments.values())))
            if assignments
            else state.replication_factor(asked.replication_factor)
        )
        topic_id = NO_TOPIC_ID
        if not validate_only:
            topic = state.create_topic(
                asked.name,
                partitions,
                replication_factor=factor,
                configs=configs,
                assignments=assignments or None,
            )
            topic_id = topic.topic_id
        results.append(
            build(
                result_cls,
                name=asked.name,
                topic_id=topic_id,
                error_code=Error.NONE,
                error_message=None,
                num_partitions=partitions,
                replication_factor=factor,
                configs=_configs_of(part(result_cls, "configs"), configs),
            )
        )
    return build(cls, topics=tuple(results))


def _or_default(value: int, default: int) -> int:
    return default if value == -1 else value


def _refused(cls: type[Any], name: str, error: Error, message: str) -> Any:
    return build(cls, name=name, error_code=error, error_message=message)


def _check_topic(state: ClusterState, asked: Any) -> Failure | None:
    invalid = invalid_topic_name(asked.name)
    if invalid is not None:
        return Error.INVALID_TOPIC_EXCEPTION, invalid
    if asked.name in state.by_name:
        return Error.TOPIC_ALREADY_EXISTS, f"Topic '{asked.name}' already exists."
    if asked.assignments:
        if asked.num_partitions != -1 or asked.replication_factor != -1:
            return (
                Error.INVALID_REQUEST,
                "Both numPartitions or replicationFactor and replicasAssignments were set.",
            )
        failure = _check_assignments(
            state, {a.partition_index: list(a.broker_ids) for a in asked.assignments}, 0
        )
        if failure is not None:
            return failure
    else:
        if asked.num_partitions == 0 or asked.num_partitions < -1:
            return (
                Error.INVALID_PARTITIONS,
                "Number of partitions was set to an invalid non-positive value.",
            )
        factor = asked.replication_factor
        if factor == 0 or factor < -1:
            return (
                Error.INVALID_REPLICATION_FACTOR,
                "Replication factor must be larger than 0, or -1 to use the default value.",
            )
        factor = state.replication_factor(factor)
        if factor > len(state.brokers):
            return (
                Error.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {factor} time(s): The target replication "
                f"factor of {factor} cannot be reached because only {len(state.brokers)} "
                "broker(s) are registered.",
            )
    return _check_configs({c.name: c.value for c in asked.configs})


def _check_configs(configs: Mapping[str, str | None]) -> Failure | None:
    unknown = unknown_keys(configs)
    if unknown:
        return Error.INVALID_CONFIG, f"Unknown topic config name: {unknown[0]}"
    nulls = sorted(k for k, v in configs.items() if v is None)
    if nulls:
        return Error.INVALID_REQUEST, f"Null value not supported for topic configs: {nulls[0]}"
    return None


def _check_assignments(
    state: ClusterState, assignments: Mapping[int, list[int]], first: int
) -> Failure | None:
    if sorted(assignments) != list(range(first, first + len(assignments))):
        return (
            Error.INVALID_REPLICA_ASSIGNMENT,
            f"Partitions should be a consecutive 0-based integer sequence: {sorted(assignments)}",
        )
    sizes = {len(brokers) for brokers in assignments.values()}
    for brokers in assignments.values():
        if not brokers:
            return Error.INVALID_REPLICA_ASSIGNMENT, "Empty replica assignment."
        if len(set(brokers)) != len(brokers):
            return Error.INVALID_REPLICA_ASSIGNMENT, f"Duplicate brokers in {brokers}."
        unknown = [b for b in brokers if b not in state.brokers]
        if unknown:
            return (
                Error.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes broker {unknown[0]}, but no such "
                "broker is registered.",
            )
    if len(sizes) > 1:
        return Error.INVALID_REPLICA_ASSIGNMENT, "All partitions must have the same replica count."
    return None


def _configs_of(cls: type[Any], configs: Mapping[str, str | None]) -> tuple[Any, ...]:
    """A new topic's whole configuration, its own values marked as set for the topic."""
    return tuple(
        build(
            cls,
            name=name,
            value=configs.get(name, default),
            read_only=False,
            config_source=_DYNAMIC_TOPIC_CONFIG if name in configs else _DEFAULT_CONFIG,
            is_sensitive=False,
        )
        for name, default in TOPIC_DEFAULTS.items()
    )


# -- DeleteTopics ----------------------------------------------------------------------------


async def delete_topics(call: Call) -> Any:
    state = call.state
    cls = response_for(call)
    result_cls = part(cls, "responses")
    request = call.request
    if call.version >= 6:
        asked = [(t.name, t.topic_id) for t in request.topics]
    else:
        asked = [(name, NO_TOPIC_ID) for name in request.topic_names]
    twice = _duplicates(
        [name if topic_id == NO_TOPIC_ID else str(topic_id) for name, topic_id in asked]
    )
    results = []
    for asked_name, asked_id in asked:
        name, topic_id = asked_name, asked_id
        by_id = topic_id != NO_TOPIC_ID
        key = str(topic_id) if by_id else name
        error, message = Error.NONE, None
        if by_id and name is not None:
            error, message = Error.INVALID_REQUEST, "Topic name and topic id are both set."
        elif key in twice:
            error, message = Error.INVALID_REQUEST, "Duplicate topic name."
        else:
            topic = state.by_id.get(topic_id) if by_id else state.by_name.get(name or "")
            if topic is None:
                error = Error.UNKNOWN_TOPIC_ID if by_id else Error.UNKNOWN_TOPIC_OR_PARTITION
                message = "This server does not host this topic ID." if by_id else None
            else:
                name, topic_id = topic.name, topic.topic_id
                state.delete_topic(topic)
        results.append(
            build(
                result_cls,
                name=name,
                topic_id=topic_id,
                error_code=error,
                error_message=message,
            )
        )
    return build(cls, responses=tuple(results))


# -- CreatePartitions ------------------------------------------------------------------------


async def create_partitions(call: Call) -> Any:
    state = call.state
    cls = response_for(call)
    result_cls = part(cls, "results")
    request = call.request
    twice = _duplicates([t.name for t in request.topics])
    results = []
    for asked in request.topics:
        failure: Failure | None
        if asked.name in twice:
            failure = Error.INVALID_REQUEST, "Duplicate topic name."
        else:
            failure = _grow(state, asked, validate_only=request.validate_only)
        error, message = failure if failure is not None else (Error.NONE, None)
        results.append(build(result_cls, name=asked.name, error_code=error, error_message=message))
    return build(cls, results=tuple(results))


def _grow(state: ClusterState, asked: Any, *, validate_only: bool) -> Failure | None:
    topic = state.by_name.get(asked.name)
    if topic is None:
        return Error.UNKNOWN_TOPIC_OR_PARTITION, f"Topic '{asked.name}' does not exist."
    current = len(topic.partitions)
    if asked.count < current:
        return (
            Error.INVALID_PARTITIONS,
            f"Topic currently has {current} partitions, which is higher than the requested "
            f"{asked.count}.",
        )
    if asked.count == current:
        return Error.INVALID_PARTITIONS, f"Topic already has {current} partitions."
    assignments = None
    if asked.assignments is not None:
        if len(asked.assignments) != asked.count - current:
            return (
                Error.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {asked.count - current} additional partition(s), but only "
                f"{len(asked.assignments)} assignment(s) were specified.",
            )
        assignments = {current + i: list(a.broker_ids) for i, a in enumerate(asked.assignments)}
        failure = _check_assignments(state, assignments, current)
        if failure is not None:
            return failure
    if not validate_only:
        state.add_partitions(topic, asked.count, assignments)
    return None
