"""Produce (v3-13): batches checked, idempotence applied, appended at the leader.

Per partition, in Kafka's order: acks must be -1, 0 or 1 (else INVALID_REQUIRED_ACKS for
all); the topic must exist (UNKNOWN_TOPIC_OR_PARTITION, or UNKNOWN_TOPIC_ID from v13, by id);
the request's rules for the batch (:mod:`~kafkawire.testing.fake.batch_check`); this broker
must lead the partition (NOT_LEADER_OR_FOLLOWER, with the leader named from v10, KIP-951);
the log's rules for the batch; a transactional batch must belong to an open transaction
holding the partition (KIP-890's check: INVALID_TXN_STATE); then the log's idempotence rules.
Every replica is in sync, so acks 1 and -1 answer alike. With acks 0 nothing is answered,
and an error closes the connection, as Kafka does so that the client notices.
"""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.batch_check import log_check, request_check
from kafkawire.testing.fake.build import build, has, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.hooks import CUT
from kafkawire.testing.fake.producer_state import AppendError
from kafkawire.testing.fake.state import ClusterState, Partition

from .common import find_topic, leader_hint, node_endpoints, response_for, unknown_topic

__all__ = ["handle"]

_ACKS = (-1, 0, 1)
_FIRST_BY_ID = 13


async def handle(call: Call) -> Any:
    state = call.state
    request = call.request
    cls = response_for(call)
    topic_cls = part(cls, "responses")
    partition_cls = part(topic_cls, "partition_responses")
    by_id = call.version >= _FIRST_BY_ID
    hinted: set[int] = set()
    failed = False
    topics = []
    for data in request.topic_data:
        topic = find_topic(state, getattr(data, "name", None), getattr(data, "topic_id", None))
        answers = []
        for asked in data.partition_data:
            partition = None if topic is None else state.partition(topic.name, asked.index)
            if request.acks not in _ACKS:
                error, message, base = Error.INVALID_REQUIRED_ACKS, None, -1
            elif partition is None:
                error = unknown_topic(by_id) if topic is None else Error.UNKNOWN_TOPIC_OR_PARTITION
                message, base = None, -1
            else:
                error, message, base = _append(call, partition, asked.records)
            failed = failed or error is not Error.NONE
            hint = Error.NONE
            if has(partition_cls, "current_leader") and error is Error.NOT_LEADER_OR_FOLLOWER:
                hint = error
                if partition is not None and partition.leader >= 0:
                    hinted.add(partition.leader)
            answers.append(
                build(
                    partition_cls,
                    index=asked.index,
                    error_code=error,
                    base_offset=base,
                    log_append_time_ms=-1,
                    log_start_offset=partition.log.log_start_offset
                    if partition is not None and error is Error.NONE
                    else -1,
                    error_message=message,
                    current_leader=leader_hint(partition_cls, partition, hint),
                )
            )
        topics.append(
            build(
                topic_cls,
                name=getattr(data, "name", None),
                topic_id=getattr(data, "topic_id", None),
                partition_responses=tuple(answers),
            )
        )
    if request.acks == 0:
        return CUT if failed else None
    return build(
        cls,
        responses=tuple(topics),
        node_endpoints=node_endpoints(cls, state, hinted) if has(cls, "node_endpoints") else (),
    )


def _append(call: Call, partition: Partition, records: Any) -> tuple[Error, str | None, int]:
    """(error, message, base offset) of appending one partition's batch."""
    state: ClusterState = call.state
    where = f"{partition.topic}-{partition.index}"
    topic = state.by_name[partition.topic]
    try:
        data = request_check(records, produce_version=call.version)
        if partition.leader != call.node_id:
            return Error.NOT_LEADER_OR_FOLLOWER, None, -1
        batch = log_check(
            data,
            max_message_bytes=int(
                topic.configs.get("max.message.bytes", state.config.max_message_bytes)
            ),
            compacted="compact" in topic.configs.get("cleanup.policy", "delete"),
            where=where,
        )
        if batch.is_transactional:
            error = call.services.transactions.check_produce(
                batch.producer_id, batch.producer_epoch, (partition.topic, partition.index)
            )
            if error is not Error.NONE:
                return error, f"transactional batch to {where} outside its transaction", -1
        appended = partition.log.append(batch, data, partition.leader_epoch)
    except AppendError as exc:
        return exc.code, exc.message, -1
    if not appended.duplicate:
        state.changes.notify()
    return Error.NONE, None, appended.base_offset
