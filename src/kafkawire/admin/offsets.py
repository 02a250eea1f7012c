"""Partition offsets: list them (earliest, latest, max timestamp, by time), delete records.

Both requests go to each partition's leader, split and merged by
:func:`kafkawire.operations.fanout.fan_out`: one request per leader, sent at once; a partition
whose answer is retriable (a leader that moved) is asked again, after a refresh, until the
call's time is up; a topic or partition the cluster does not know is answered at once; every
other partition keeps its own result or error. ListOffsets is
:mod:`kafkawire.operations.list_offsets`'s, as for the consumer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafkawire.cluster import TopicPartition
from kafkawire.errors import error_for_code
from kafkawire.messages.delete_records import v2 as delete_records
from kafkawire.operations import list_offsets as listing
from kafkawire.operations.fanout import fan_out, per_topic, retriable_for_known_topics
from kafkawire.operations.list_offsets import EARLIEST, LATEST, MAX_TIMESTAMP, ListedOffset

from ._base import AdminBase
from .results import ItemResults

__all__ = ["EARLIEST", "LATEST", "MAX_TIMESTAMP", "ListedOffset", "OffsetsMixin"]


class OffsetsMixin(AdminBase):
    async def list_offsets(
        self, specs: Mapping[TopicPartition, int]
    ) -> ItemResults[TopicPartition, ListedOffset]:
        """Offsets by ``specs``: ``{TopicPartition: EARLIEST | LATEST | MAX_TIMESTAMP |
        timestamp in ms}``; a timestamp finds the first record at or after it."""
        return ItemResults(
            await listing.list_offsets(self._cluster, specs, retry=retriable_for_known_topics)
        )

    async def delete_records(
        self, before: Mapping[TopicPartition, int]
    ) -> ItemResults[TopicPartition, int]:
        """Delete each partition's records before ``before[partition]`` (``LATEST``: all);
        each partition's new low watermark (its first offset) or error."""

        async def build(leader: int, share: dict[TopicPartition, int]) -> Any:
            m = delete_records
            return m.DeleteRecordsRequest(
                topics=per_topic(
                    share,
                    lambda name, ps: m.DeleteRecordsTopic(name=name, partitions=ps),
                    lambda tp, offset: m.DeleteRecordsPartition(
                        partition_index=tp.partition, offset=offset
                    ),
                ),
                timeout_ms=self._operation_timeout_ms,
            )

        return ItemResults(
            await fan_out(
                self._cluster,
                before,
                build,
                _low_watermarks,
                what="DeleteRecords",
                retry=retriable_for_known_topics,
            )
        )


def _low_watermarks(response: Any, share: dict[TopicPartition, int]) -> dict[TopicPartition, Any]:
    """Each partition's new low watermark, or its error."""
    return {
        (tp := TopicPartition(topic.name, p.partition_index)): error_for_code(
            p.error_code, f"{tp.topic}/{tp.partition}"
        )
        or int(p.low_watermark)
        for topic in response.topics
        for p in topic.partitions
    }
