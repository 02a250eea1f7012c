"""Partition offsets: list them (earliest, latest, max timestamp, by time), delete records.

Both requests go to each partition's leader: the partitions asked about are split into one
request per leader, sent at once. A partition whose answer means the metadata was stale (a
leader moved) is asked again, after a refresh, until the call's time is up; every other
partition keeps its own result or error.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kafkawire.cluster import TopicPartition
from kafkawire.errors import KafkawireError, UnknownTopicOrPartitionError
from kafkawire.messages.delete_records import v2 as delete_records
from kafkawire.messages.list_offsets import v11 as list_offsets

from ._base import AdminBase
from .results import ItemResults, error_of, unanswered

__all__ = ["EARLIEST", "LATEST", "MAX_TIMESTAMP", "ListedOffset", "OffsetsMixin"]

LATEST = -1  # ListOffsets timestamps with a special meaning
EARLIEST = -2
MAX_TIMESTAMP = -3  # the offset of the record with the largest timestamp (ListOffsets v7+)

V = TypeVar("V")
_Answer = dict[TopicPartition, Any]  # what one request answered, per partition


@dataclass(frozen=True, slots=True)
class ListedOffset:
    offset: int  # -1 when no record matches
    timestamp: int  # -1 where not known
    leader_epoch: int


class OffsetsMixin(AdminBase):
    async def list_offsets(
        self, specs: Mapping[TopicPartition, int]
    ) -> ItemResults[TopicPartition, ListedOffset]:
        """Offsets by ``specs``: ``{TopicPartition: EARLIEST | LATEST | MAX_TIMESTAMP |
        timestamp in ms}``; a timestamp finds the first record at or after it."""

        def request(partitions: list[TopicPartition]) -> Any:
            return list_offsets.ListOffsetsRequest(
                replica_id=-1,  # a client, not a follower
                topics=tuple(
                    list_offsets.ListOffsetsTopic(
                        name=topic,
                        partitions=tuple(
                            list_offsets.ListOffsetsPartition(
                                partition_index=p, timestamp=specs[tp]
                            )
                            for tp, p in indexes
                        ),
                    )
                    for topic, indexes in by_topic(partitions).items()
                ),
            )

        return await self._by_leader(specs, request, "list offsets", _listed)

    async def delete_records(
        self, before: Mapping[TopicPartition, int]
    ) -> ItemResults[TopicPartition, int]:
        """Delete each partition's records before ``before[partition]`` (``LATEST``: all);
        each partition's new low watermark (its first offset) or error."""

        def request(partitions: list[TopicPartition]) -> Any:
            return delete_records.DeleteRecordsRequest(
                topics=tuple(
                    delete_records.DeleteRecordsTopic(
                        name=topic,
                        partitions=tuple(
                            delete_records.DeleteRecordsPartition(
                                partition_index=p, offset=before[tp]
                            )
                            for tp, p in indexes
                        ),
                    )
                    for topic, indexes in by_topic(partitions).items()
                ),
                timeout_ms=self._operation_timeout_ms,
            )

        return await self._by_leader(
            before, request, "delete records", lambda answer: int(answer.low_watermark)
        )

    async def _by_leader(
        self,
        partitions: Iterable[TopicPartition],
        request: Callable[[list[TopicPartition]], Any],
        what: str,
        result: Callable[[Any], V],
    ) -> ItemResults[TopicPartition, V]:
        """``request`` sent once per leader of ``partitions``; each partition's ``result``."""
        cluster = self._cluster
        pending = [TopicPartition(*tp) for tp in partitions]
        results: dict[TopicPartition, V | KafkawireError] = {}
        deadline = cluster.deadline()
        delays = cluster.settings.backoff.delays(deadline)
        while pending:
            answers = await self._ask_leaders(pending, request)
            retry = []
            for tp in pending:
                answer = answers[tp]
                error = answer if isinstance(answer, KafkawireError) else error_of(answer)
                if error is None:
                    results[tp] = result(answer)
                    continue
                results[tp] = error
                # A leader that moved: ask the new one. Transport errors were retried below.
                if getattr(error, "invalid_metadata", False) and not isinstance(
                    error, UnknownTopicOrPartitionError
                ):
                    retry.append(tp)
            delay = next(delays, None) if retry else None
            if delay is None:
                break
            cluster.mark_metadata_stale()
            await asyncio.sleep(delay)
            pending = retry
        return ItemResults(results)

    async def _ask_leaders(
        self, partitions: list[TopicPartition], request: Callable[[list[TopicPartition]], Any]
    ) -> dict[TopicPartition, Any]:
        """Each partition's answer (or error) from its leader: one request per leader."""
        answers: dict[TopicPartition, Any] = {}
        metadata = await self._cluster.metadata(list({tp.topic for tp in partitions}))
        by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
        for tp in partitions:
            try:
                by_leader[metadata.leader_for(tp.topic, tp.partition)].append(tp)
            except KafkawireError as error:  # no leader, unknown topic, no such partition
                answers[tp] = error
        leaders = list(by_leader)
        sends: list[Awaitable[Any]] = [
            self._send(request(by_leader[n]), node_id=n) for n in leaders
        ]
        responses = await asyncio.gather(*sends, return_exceptions=True)
        for leader, response in zip(leaders, responses, strict=True):
            if isinstance(response, BaseException) and not isinstance(response, KafkawireError):
                raise response
            for tp in by_leader[leader]:
                answers[tp] = (
                    response if isinstance(response, KafkawireError) else _answer_for(response, tp)
                )
        return answers


def by_topic(
    partitions: Iterable[TopicPartition],
) -> dict[str, list[tuple[TopicPartition, int]]]:
    """Partitions grouped by topic, as requests list them: ``{topic: [(tp, index), ...]}``."""
    grouped: dict[str, list[tuple[TopicPartition, int]]] = defaultdict(list)
    for tp in partitions:
        grouped[tp.topic].append((tp, tp.partition))
    return grouped


def _answer_for(response: Any, tp: TopicPartition) -> Any:
    for topic in response.topics:
        if topic.name == tp.topic:
            for partition in topic.partitions:
                if partition.partition_index == tp.partition:
                    return partition
    return unanswered(f"{tp.topic}/{tp.partition}", response)


def _listed(answer: Any) -> ListedOffset:
    if hasattr(answer, "old_style_offsets"):  # v0: a list of offsets, newest first
        offsets = answer.old_style_offsets
        return ListedOffset(offsets[0] if offsets else -1, -1, -1)
    return ListedOffset(answer.offset, answer.timestamp, getattr(answer, "leader_epoch", -1))
