"""OffsetForLeaderEpoch (v0-4): where a leader epoch ends in a partition's log (KIP-101, KIP-320).

A consumer's request (``replica_id`` -1, v3+) must reach the leader; the brokers' own (before
v3, or ``replica_id`` -2) any replica. After the epoch check (v2+), the answer is the log's
epoch cache's (:meth:`~kafkawire.testing.fake.log.PartitionLog.end_offset_for`): the largest
epoch at most the one asked and the offset where the next epoch starts (the log end for the
current epoch), or epoch -1 and offset -1 for an epoch newer than any.
"""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.build import build
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error

from .common import each_partition, leader_check, response_for

__all__ = ["handle"]

_CONSUMER = -1


async def handle(call: Call) -> Any:
    state = call.state
    leader_only = getattr(call.request, "replica_id", -2) == _CONSUMER

    def answer(topic: str, asked: Any) -> dict[str, Any]:
        partition = state.partition(topic, asked.partition)
        epoch, end = -1, -1
        if partition is None:
            error = Error.UNKNOWN_TOPIC_OR_PARTITION
        else:
            error = leader_check(
                partition,
                call.node_id if leader_only else partition.leader,
                getattr(asked, "current_leader_epoch", -1),
            )
            if not leader_only and call.node_id not in partition.replicas:
                error = Error.NOT_LEADER_OR_FOLLOWER
        if partition is not None and error is Error.NONE:
            epoch, end = partition.log.end_offset_for(asked.leader_epoch)
        return {
            "error_code": error,
            "partition": asked.partition,
            "leader_epoch": epoch,
            "end_offset": end,
        }

    return build(response_for(call), topics=each_partition(call, answer, topic_field="topic"))
