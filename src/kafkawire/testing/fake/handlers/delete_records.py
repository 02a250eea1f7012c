"""DeleteRecords (v0-2): move a partition's log start offset up, at its leader.

Offset -1 means the high watermark; an offset past it (or below zero) is OFFSET_OUT_OF_RANGE.
The answer's low watermark is the log start offset after the deletion (unchanged by an offset
below it).
"""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.build import build, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error

from .common import leader_check, response_for

__all__ = ["handle"]

_HIGH_WATERMARK = -1


async def handle(call: Call) -> Any:
    state = call.state
    cls = response_for(call)
    topic_cls = part(cls, "topics")
    partition_cls = part(topic_cls, "partitions")
    topics = []
    for asked in call.request.topics:
        answers = []
        for p in asked.partitions:
            partition = state.partition(asked.name, p.partition_index)
            low = -1
            if partition is None:
                error = Error.UNKNOWN_TOPIC_OR_PARTITION
            else:
                error = leader_check(partition, call.node_id, -1)
            if partition is not None and error is Error.NONE:
                log = partition.log
                offset = log.high_watermark if p.offset == _HIGH_WATERMARK else p.offset
                if not 0 <= offset <= log.high_watermark:
                    error = Error.OFFSET_OUT_OF_RANGE
                else:
                    log.delete_before(offset)
                    low = log.log_start_offset
                    state.changes.notify()
            answers.append(
                build(
                    partition_cls,
                    partition_index=p.partition_index,
                    low_watermark=low,
                    error_code=error,
                )
            )
        topics.append(build(topic_cls, name=asked.name, partitions=tuple(answers)))
    return build(cls, topics=tuple(topics))
