"""What ShareFetch and ShareAcknowledge share: who asks, finding a partition on its leader,
acknowledging one partition, and the parts of an answer.

Checks, in Kafka's order: a member id (at most 36 characters; Kafka does not ask the group
coordinator whether the member is in the group) and a group id, else INVALID_REQUEST for the
whole request. Per partition: the topic id (UNKNOWN_TOPIC_ID), the partition
(UNKNOWN_TOPIC_OR_PARTITION), this broker leading it (NOT_LEADER_OR_FOLLOWER, answered with
the current leader and its endpoint). Acknowledgements are checked first as batches
(:mod:`kafkawire.testing.fake.share.acks`), then need the topic and partition, and (unless
there are none to apply) a share partition this broker loaded in its current leadership:
UNKNOWN_TOPIC_OR_PARTITION otherwise, also on a broker the partition has moved away from (its
leader dropped its share partition when it lost the leadership, as Kafka's does).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafkawire.testing.fake.build import build, has, nested, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.share.acks import read_batches
from kafkawire.testing.fake.share.partition import AckFailure
from kafkawire.testing.fake.share.sessions import Partition as SessionPartition
from kafkawire.testing.fake.state import ClusterState, Partition

from .common import node_endpoints

__all__ = [
    "Answer",
    "acknowledge_partition",
    "locate",
    "member_problem",
    "partition_answers",
]

_MAX_MEMBER_ID = 36


def member_problem(request: Any) -> str | None:
    """Why a share request's group and member are refused (INVALID_REQUEST), or None."""
    member_id = request.member_id
    if not member_id or len(member_id) > _MAX_MEMBER_ID:
        return f"member id must be 1 to {_MAX_MEMBER_ID} characters, not {member_id!r}"
    if not request.group_id:
        return "group id is required"
    return None


def locate(
    state: ClusterState, node_id: int, topic_id: uuid.UUID, index: int
) -> tuple[Partition | None, Error]:
    """The partition (when it exists) and the error a share request meets there."""
    topic = state.by_id.get(topic_id)
    if topic is None:
        return None, Error.UNKNOWN_TOPIC_ID
    if not 0 <= index < len(topic.partitions):
        return None, Error.UNKNOWN_TOPIC_OR_PARTITION
    partition = topic.partitions[index]
    if partition.leader != node_id:
        return partition, Error.NOT_LEADER_OR_FOLLOWER
    return partition, Error.NONE


def acknowledge_partition(
    call: Call,
    key: tuple[str, str],
    where: SessionPartition,
    batches: Sequence[Any],
    *,
    renew: bool,
) -> AckFailure | None:
    """Apply a member's acknowledgements of one partition; why they were refused, or None."""
    read = read_batches(batches, renew=renew)
    if isinstance(read, AckFailure):
        return read
    partition, error = locate(call.state, call.node_id, *where)
    if partition is None:
        return AckFailure(error, f"{error.name} for partition {where[1]} of topic {where[0]}")
    if not read:
        return None  # nothing to acknowledge: Kafka answers it without the share partition
    group_id, member_id = key
    shares = call.services.shares
    share = shares.loaded(group_id, where[0], partition) if error is Error.NONE else None
    if share is None:
        # Not loaded in this leadership, or led elsewhere: a leader that loses a partition
        # drops its share partition, so Kafka finds none to acknowledge on.
        return AckFailure(
            Error.UNKNOWN_TOPIC_OR_PARTITION,
            f"no share partition {partition.topic}-{partition.index} of group {group_id} here",
        )
    return shares.acknowledge(group_id, member_id, share, read)


@dataclass
class Answer:
    """One partition of an answer: the fetch's outcome and the acknowledgement's."""

    error: Error = Error.NONE
    partition: Partition | None = None  # for the leader hint of NOT_LEADER_OR_FOLLOWER
    acknowledge: AckFailure | None = None
    records: bytes = b""
    acquired: tuple[tuple[int, int, int], ...] = ()  # (first, last, delivery count)


def partition_answers(
    cls: type[Any], call: Call, answers: Mapping[SessionPartition, Answer]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The ``responses`` and ``node_endpoints`` of a ShareFetch or ShareAcknowledge answer."""
    topic_cls = part(cls, "responses")
    partition_cls = part(topic_cls, "partitions")
    # ShareFetch answers acquired records and two codes; ShareAcknowledge one code.
    fetching = has(partition_cls, "acquired_records")
    hinted: set[int] = set()
    by_topic: dict[uuid.UUID, list[Any]] = {}
    for (topic_id, index), answer in answers.items():
        ack = answer.acknowledge
        leader = answer.partition
        hint = {}
        stale = answer.error is Error.NOT_LEADER_OR_FOLLOWER
        if stale and leader is not None and leader.leader >= 0:
            hinted.add(leader.leader)
            hint = {"leader_id": leader.leader, "leader_epoch": leader.leader_epoch}
        error, message = answer.error, None
        if not fetching and ack is not None:
            error, message = ack.error, ack.message
        elif error is not Error.NONE:
            message = error.name
        by_topic.setdefault(topic_id, []).append(
            build(
                partition_cls,
                partition_index=index,
                error_code=error,
                error_message=message,
                acknowledge_error_code=ack.error if ack else Error.NONE,
                acknowledge_error_message=ack.message if ack else None,
                current_leader=nested(partition_cls, "current_leader", **hint),
                records=answer.records,
                acquired_records=_acquired(partition_cls, answer) if fetching else (),
            )
        )
    topics = tuple(
        build(topic_cls, topic_id=topic_id, partitions=tuple(parts))
        for topic_id, parts in by_topic.items()
    )
    return topics, node_endpoints(cls, call.state, hinted)


def _acquired(partition_cls: type[Any], answer: Answer) -> tuple[Any, ...]:
    acquired_cls = part(partition_cls, "acquired_records")
    return tuple(
        build(acquired_cls, first_offset=first, last_offset=last, delivery_count=count)
        for first, last, count in answer.acquired
    )
