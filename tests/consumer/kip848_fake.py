"""A fake group coordinator for the KIP-848 consumer group protocol, on fake brokers.

It answers FindCoordinator (``coordinator`` node), ConsumerGroupHeartbeat from a script the
test writes (``answer(request)`` returns the heartbeat answer's fields), OffsetFetch (nothing
committed), OffsetCommit (``commit_error(request)``), ListOffsets (offset 0) and Fetch (no
records, after the long poll's wait, at most 0.1 s); Metadata comes from
:class:`~tests.cluster.hostile.FakeCluster`, with topic ``t`` named by :data:`TOPIC_ID`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from kafkawire.consumer import TopicPartition
from tests.cluster.hostile import FakeCluster
from tests.net.fakebroker import FakeClient, messages

from .fake_leader import committed_answer, coordinator_answer, each_partition, same_topic

TOPIC_ID = uuid.UUID("7f2c3c1e-0000-4000-8000-00000000000a")
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)

FETCH, LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, HEARTBEAT = 1, 2, 8, 9, 10, 68

Answer = Callable[[Any], dict[str, Any]]


def assignment(*partitions: int) -> dict[str, Any]:
    """The ``assignment`` field of a heartbeat answer giving partitions of topic ``t``."""
    return {"assignment": [(TOPIC_ID, partitions)]}


class FakeCoordinator:
    """``async with FakeCoordinator(answer) as fake``: brokers 1..``brokers``; the group's
    coordinator is ``fake.coordinator`` (changeable); ``heartbeats``, ``commits`` and
    ``fetches`` (OffsetFetch) hold what it was sent."""

    def __init__(
        self,
        answer: Answer,
        *,
        brokers: int = 1,
        commit_error: Callable[[Any], int] = lambda request: 0,
    ) -> None:
        self.answer = answer
        self.commit_error = commit_error
        self.coordinator = 1
        self.heartbeats: list[Any] = []
        self.commits: list[Any] = []
        self.fetches: list[Any] = []
        self.finds = 0
        self.heartbeat_seen = asyncio.Event()
        self._cluster = FakeCluster(brokers, self._handle, partitions=2, topic_id=TOPIC_ID)

    async def __aenter__(self) -> FakeCoordinator:
        await self._cluster.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._cluster.__aexit__(*exc)

    @property
    def bootstrap(self) -> str:
        return self._cluster.bootstrap

    async def until_heartbeat(self, wanted: Callable[[Any], bool], timeout: float = 10) -> Any:
        """The first heartbeat ``wanted`` accepts, waiting for it if need be (or failing after
        ``timeout`` s)."""

        async def wait() -> Any:
            while True:
                found = next((r for r in self.heartbeats if wanted(r)), None)
                if found is not None:
                    return found
                self.heartbeat_seen.clear()
                await self.heartbeat_seen.wait()

        return await asyncio.wait_for(wait(), timeout)

    async def _handle(self, node: int, client: FakeClient, header: Any, request: Any) -> Any:
        key, version = header.request_api_key, header.request_api_version
        m = messages(key, version)
        if key == FIND_COORDINATOR:
            self.finds += 1
            return coordinator_answer(m, request, self.coordinator)
        if key == HEARTBEAT:
            self.heartbeats.append(request)
            self.heartbeat_seen.set()
            return self._heartbeat_answer(m, self.answer(request))
        if key == OFFSET_FETCH:
            self.fetches.append(request)
            return committed_answer(m, request)
        if key == OFFSET_COMMIT:
            self.commits.append(request)
            code = self.commit_error(request)
            answers = each_partition(
                m.OffsetCommitResponseTopic,
                m.OffsetCommitResponsePartition,
                request.topics,
                error_code=code,
            )
            return m.OffsetCommitResponse(topics=answers)
        if key == LIST_OFFSETS:
            answers = each_partition(
                m.ListOffsetsTopicResponse, m.ListOffsetsPartitionResponse, request.topics
            )
            return m.ListOffsetsResponse(topics=answers)
        if key == FETCH:
            await asyncio.sleep(min(request.max_wait_ms, 100) / 1000)
            return m.FetchResponse(
                responses=tuple(
                    m.FetchableTopicResponse(
                        **same_topic(t),
                        partitions=tuple(
                            m.PartitionData(partition_index=p.partition) for p in t.partitions
                        ),
                    )
                    for t in request.topics
                )
            )
        return None

    def acknowledged(self) -> bool:
        """Whether a heartbeat before the last one reported owned partitions."""
        return any(r.topic_partitions for r in self.heartbeats[:-1])

    @staticmethod
    def _heartbeat_answer(m: Any, fields: dict[str, Any]) -> Any:
        fields = {"heartbeat_interval_ms": 50, **fields}
        given = fields.pop("assignment", None)
        if given is not None:
            fields["assignment"] = m.Assignment(
                topic_partitions=tuple(
                    m.ConsumerGroupHeartbeatResponseTopicPartitions(
                        topic_id=topic_id, partitions=tuple(ps)
                    )
                    for topic_id, ps in given
                )
            )
        return m.ConsumerGroupHeartbeatResponse(**fields)
