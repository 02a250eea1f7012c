"""ListOffsets (v1-11): offsets by time, and the special times Kafka defines.

At the leader, after the epoch check (:func:`~.common.leader_check`): EARLIEST (-2) and
EARLIEST_LOCAL (-4) are the log start offset; LATEST (-1) the high watermark, or at
read_committed the last stable offset; MAX_TIMESTAMP (-3) the first record with the largest
timestamp; LATEST_TIERED (-5) and later special times -1 (no tiered storage here); a time
t >= 0 the first record at or after t. Searches stop at the high watermark (last stable
offset), and a time no record reaches answers offset -1 and timestamp -1. The leader epoch is
the current one for LATEST, else that of the offset found.
"""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.build import build
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.log import PartitionLog

from .common import each_partition, leader_check, response_for

__all__ = ["handle"]

LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL = -1, -2, -3, -4
_READ_COMMITTED = 1
_NOT_FOUND = (-1, -1, -1)


async def handle(call: Call) -> Any:
    state = call.state
    read_committed = getattr(call.request, "isolation_level", 0) == _READ_COMMITTED

    def answer(topic: str, asked: Any) -> dict[str, Any]:
        partition = state.partition(topic, asked.partition_index)
        error = Error.UNKNOWN_TOPIC_OR_PARTITION
        found = _NOT_FOUND
        if partition is not None:
            error = leader_check(
                partition, call.node_id, getattr(asked, "current_leader_epoch", -1)
            )
        if partition is not None and error is Error.NONE:
            found = _lookup(partition.log, partition.leader_epoch, asked.timestamp, read_committed)
        timestamp, offset, epoch = found
        return {
            "partition_index": asked.partition_index,
            "error_code": error,
            "timestamp": timestamp,
            "offset": offset,
            "leader_epoch": epoch,
        }

    return build(response_for(call), topics=each_partition(call, answer))


def _lookup(
    log: PartitionLog, leader_epoch: int, timestamp: int, read_committed: bool
) -> tuple[int, int, int]:
    """(timestamp, offset, leader epoch) answering one partition."""
    upper = log.last_stable_offset if read_committed else log.high_watermark
    if timestamp == LATEST:
        return -1, upper, leader_epoch
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return -1, log.log_start_offset, log.epoch_of(log.log_start_offset)
    if timestamp == MAX_TIMESTAMP:
        return log.max_timestamp(upper) or _NOT_FOUND
    if timestamp < 0:
        return _NOT_FOUND
    return log.offset_for_timestamp(timestamp, upper) or _NOT_FOUND
