"""A fake partition leader that keeps fetch sessions (KIP-227) as Kafka's ``FetchManager`` does.

It is the handler of a one-broker ``FakeCluster``: it leads every partition of topic ``t``,
whose logs are ``logs[p]`` records long (record ``o`` of partition ``p`` has the value
``b"p:o"``), and answers Fetch requests from them, a batch of up to ``batch`` records per
partition. Sessions follow the protocol: epoch 0 opens one (when ``sessions`` is true), the
next requests must carry its id and the next epoch, and name only partitions that changed;
an incremental answer names only partitions with records or a new high watermark.

``faults`` scripts what happens to the next Fetch requests, one entry each: ``"ok"``, an error
code for the whole request (70 forgets the session first, as a broker that evicted it), or
``"drop"`` (the connection is closed unanswered). Whatever the client does wrong that a real
broker would not notice or would merely refuse is listed in ``violations``, so a test can
fail on it even where the client recovers.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkawire.consumer.fetching.fetch_session import next_epoch
from kafkawire.records import RecordBatchBuilder
from tests.net.fakebroker import FakeClient, messages

FETCH = 1
Fault = str | int
_Answer = tuple[int, bytes | None, int]  # partition, records, high watermark


@dataclass
class SeenFetch:
    """One Fetch as the broker saw it."""

    session_id: int
    epoch: int
    offsets: dict[int, int]  # partition -> fetch offset, of the partitions it named
    forgotten: list[int]
    leader_epochs: dict[int, int]  # partition -> current leader epoch

    @property
    def full(self) -> bool:
        return self.epoch in (0, -1)


@dataclass
class _Session:
    epoch: int  # the epoch the next request must carry
    offsets: dict[int, int]
    high_watermarks: dict[int, int] = field(default_factory=dict)


def records(partition: int, base: int, count: int, leader_epoch: int = -1) -> bytes:
    builder = RecordBatchBuilder(base_offset=base, partition_leader_epoch=leader_epoch)
    for offset in range(base, base + count):
        builder.append(None, b"%d:%d" % (partition, offset), timestamp=1)
    return builder.build()


class SessionLeader:
    """The fake leader (see the module doc); ``await leader.fetch_where(test)`` waits for a
    Fetch that ``test`` accepts and returns it."""

    def __init__(
        self,
        logs: list[int],
        *,
        sessions: bool = True,
        batch: int = 3,
        faults: Sequence[Fault] = (),
        leader_epoch: int = -1,
        topic_id: uuid.UUID | None = None,
    ) -> None:
        self.logs = list(logs)
        self.topic_id = topic_id  # how answers of v13+ name the topic
        self.sessions_enabled = sessions
        self.batch = batch
        self.faults: deque[Fault] = deque(faults)
        self.record_leader_epoch = leader_epoch  # stamped on the batches it returns
        self.sessions: dict[int, _Session] = {}
        self.fetches: list[SeenFetch] = []
        self.violations: list[str] = []
        self.extra_partition: int | None = None  # answered once, unasked, when set
        self._ids = itertools.count(1)
        self._seen = asyncio.Condition()

    async def fetch_where(
        self, test: Callable[[SeenFetch], bool], timeout: float = 10
    ) -> SeenFetch:
        async def wait() -> SeenFetch:
            async with self._seen:
                while True:
                    found = next((f for f in reversed(self.fetches) if test(f)), None)
                    if found is not None:
                        return found
                    await self._seen.wait()

        return await asyncio.wait_for(wait(), timeout)

    async def __call__(self, node: int, client: FakeClient, header: Any, request: Any) -> Any:
        if header.request_api_key != FETCH:
            return None
        module = messages(FETCH, header.request_api_version)
        seen = SeenFetch(
            session_id=request.session_id,
            epoch=request.session_epoch,
            offsets={p.partition: p.fetch_offset for t in request.topics for p in t.partitions},
            forgotten=[p for t in request.forgotten_topics_data for p in t.partitions],
            leader_epochs={
                p.partition: getattr(p, "current_leader_epoch", -1)
                for t in request.topics
                for p in t.partitions
            },
        )
        named = [*request.topics, *request.forgotten_topics_data]
        wrong = [
            t
            for t in named
            if (getattr(t, "topic", None) or t.topic_id) not in ("t", self.topic_id)
        ]
        if wrong:
            self.violations.append(f"topics named wrongly: {wrong}")
        async with self._seen:
            self.fetches.append(seen)
            self._seen.notify_all()
        fault = self.faults.popleft() if self.faults else "ok"
        if fault == "drop":
            client.abort()
            return None
        if isinstance(fault, int):
            if fault == 70:
                self.sessions.pop(seen.session_id, None)
            return module.FetchResponse(error_code=fault, session_id=0)
        answer = self._answer(seen)
        if answer is None:
            return module.FetchResponse(error_code=self._refusal(seen), session_id=0)
        session_id, answered = answer
        if self.extra_partition is not None:
            answered.append((self.extra_partition, None, 0))
            self.extra_partition = None
        if not any(data for _, data, _ in answered):
            await asyncio.sleep(min(request.max_wait_ms, 50) / 1000)  # a short long poll
        partitions = tuple(
            module.PartitionData(
                partition_index=p, high_watermark=end, records=data, log_start_offset=0
            )
            for p, data, end in answered
        )
        naming = {"topic_id": self.topic_id} if header.request_api_version >= 13 else {"topic": "t"}
        topic = module.FetchableTopicResponse(**naming, partitions=partitions)
        return module.FetchResponse(session_id=session_id, responses=(topic,))

    def _refusal(self, seen: SeenFetch) -> int:
        session = self.sessions.get(seen.session_id)
        if session is None:
            self.violations.append(f"incremental fetch with unknown session {seen.session_id}")
            return 70
        self.violations.append(f"epoch {seen.epoch} where {session.epoch} was due")
        return 71

    def _answer(self, seen: SeenFetch) -> tuple[int, list[_Answer]] | None:
        """(session id, partition answers), or None to refuse the session."""
        if seen.full:
            if seen.session_id:
                self.sessions.pop(seen.session_id, None)  # closed, or replaced below
            session = _Session(epoch=1, offsets=dict(seen.offsets))
            session_id = 0
            if seen.epoch == 0 and self.sessions_enabled:
                session_id = next(self._ids)
                self.sessions[session_id] = session
            return session_id, [self._partition(session, p) for p in seen.offsets]
        session = self.sessions.get(seen.session_id)
        if session is None or seen.epoch != session.epoch:
            return None
        for p, offset in seen.offsets.items():
            if session.offsets.get(p) == offset:
                self.violations.append(f"partition {p} sent again unchanged at {offset}")
            session.offsets[p] = offset
        for p in seen.forgotten:
            if session.offsets.pop(p, None) is None:
                self.violations.append(f"partition {p} forgotten but not in the session")
        session.epoch = next_epoch(session.epoch)
        answers = []
        for p in session.offsets:
            before = session.high_watermarks.get(p)
            answer = self._partition(session, p)
            if answer[1] or answer[2] != before:
                answers.append(answer)
        return seen.session_id, answers

    def _partition(self, session: _Session, partition: int) -> _Answer:
        offset = session.offsets[partition]
        end = self.logs[partition] if partition < len(self.logs) else 0
        count = min(self.batch, max(0, end - offset))
        data = records(partition, offset, count, self.record_leader_epoch) if count else None
        session.high_watermarks[partition] = end
        return partition, data, end
