"""DeleteRecords (v0-2): move a partition's log start offset up, at its leader.

Offset -1 means the high watermark; an offset past it (or below zero) is OFFSET_OUT_OF_RANGE.
The answer's low watermark is the log start offset after the deletion (unchanged by an offset
below it).
"""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.build import build
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error

from .common import each_partition, leader_check, response_for

__all__ = ["handle"]

_HIGH_WATERMARK = -1


async def handle(call: Call) -> Any:
    state = call.state

    def answer(topic: str, asked: Any) -> dict[str, Any]:
        partition = state.partition(topic, asked.partition_index)
        low = -1
        if partition is None:
            error = Error.UNKNOWN_TOPIC_OR_PARTITION
        else:
            error = leader_check(partition, call.node_id, -1)
        if partition is not None and error is Error.NONE:
            log = partition.log
            offset = log.high_watermark if asked.offset == _HIGH_WATERMARK else asked.offset
            if not 0 <= offset <= log.high_watermark:
                error = Error.OFFSET_OUT_OF_RANGE
            else:
                log.delete_before(offset)
                low = log.log_start_offset
                state.changes.notify()
        return {"partition_index": asked.partition_index, "low_watermark": low, "error_code": error}

    return build(response_for(call), topics=each_partition(call, answer))
