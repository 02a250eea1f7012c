"""The fetcher's fetch sessions (KIP-227) on the fake cluster, which keeps them as Kafka's
``FetchManager`` does; its hooks script the session errors, and :class:`SessionAudit` notes
what the client does wrong that a broker would merely refuse or not notice at all, so a test
fails on it even where the client recovers."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkawire.consumer import Consumer, ConsumerRecord, TopicPartition
from kafkawire.messages.fetch import v12 as fetch_v12
from kafkawire.records import RecordBatchBuilder
from kafkawire.testing.fake import CUT, Error, FakeCluster, HookContext
from tests.budgets import examples
from tests.consumer.helpers import read
from tests.fake.wire import Wire

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))
FAST = {"retry_backoff_ms": 1, "fetch_max_wait_ms": 20}
WAIT = 10  # the bound on every wait: a test must fail, not hang
Fault = str | int  # "ok", "drop" (the connection is cut), or an error code for the request


@dataclass
class SeenFetch:
    """One Fetch as the broker saw it."""

    session_id: int
    epoch: int
    offsets: dict[int, int]  # partition -> fetch offset, of the partitions it named
    forgotten: list[int]

    @property
    def full(self) -> bool:
        return self.epoch in (0, -1)

    @classmethod
    def of(cls, request: Any) -> SeenFetch:
        return cls(
            session_id=request.session_id,
            epoch=request.session_epoch,
            offsets={p.partition: p.fetch_offset for t in request.topics for p in t.partitions},
            forgotten=[p for t in request.forgotten_topics_data for p in t.partitions],
        )


def fetches(cluster: FakeCluster) -> list[SeenFetch]:
    """Every Fetch the cluster received, in order (those a fault answered too)."""
    return [SeenFetch.of(r.request) for r in cluster.requests.of("Fetch")]


async def fetch_where(cluster: FakeCluster, test: Callable[[SeenFetch], bool]) -> SeenFetch:
    """The latest Fetch ``test`` accepts, waiting for one if none came yet."""
    checked = 0
    while True:
        found = next((f for f in reversed(fetches(cluster)) if test(f)), None)
        if found is not None:
            return found
        checked = len(cluster.requests.of("Fetch"))
        await cluster.requests.wait_for("Fetch", checked + 1, timeout=WAIT)


class SessionAudit:
    """A Fetch hook noting what the client did wrong in ``violations``: a session error or a
    partition error the fake answered (an unknown session, an epoch out of turn, a topic named
    wrongly), a partition sent again unchanged, one forgotten that is not in the session. It
    reads the fake's own answer and passes it on (hooks after it may change it); put it after
    the hooks that script faults: the requests they answer never reach it."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.violations: list[str] = []
        self._sessions: dict[int, dict[int, int]] = {}  # id -> partition -> offset last sent
        cluster.control(self._audit, api_key="Fetch", keep=True)

    async def _audit(self, request: Any, ctx: HookContext) -> None:
        self._check(SeenFetch.of(request), await ctx.handle())

    def _check(self, seen: SeenFetch, answer: Any) -> None:
        if answer.error_code:
            self.violations.append(
                f"{Error(answer.error_code).name} for session {seen.session_id} at epoch "
                f"{seen.epoch}"
            )
            return
        self.violations += [
            f"partition {p.partition_index}: {Error(p.error_code).name}"
            for t in answer.responses
            for p in t.partitions
            if p.error_code
        ]
        if seen.full:
            self._sessions.pop(seen.session_id, None)
            if answer.session_id:
                self._sessions[answer.session_id] = dict(seen.offsets)
            return
        sent = self._sessions.setdefault(seen.session_id, {})
        for p, offset in seen.offsets.items():
            if sent.get(p) == offset:
                self.violations.append(f"partition {p} sent again unchanged at {offset}")
            sent[p] = offset
        for p in seen.forgotten:
            if sent.pop(p, None) is None:
                self.violations.append(f"partition {p} forgotten but not in the session")


def faults(cluster: FakeCluster, script: Sequence[Fault]) -> None:
    """The next Fetch requests meet ``script``, one entry each: ``"ok"`` (the fake answers),
    ``"drop"`` (the connection is cut unanswered), or an error code for the whole request (70
    evicts the broker's sessions first, as a cache that lost them)."""
    left = deque(script)

    def fault(request: Any, ctx: HookContext) -> Any:
        if not left:
            ctx.remove()
            return None
        next_fault = left.popleft()
        if next_fault == "ok":
            return None
        if next_fault == "drop":
            return CUT
        if next_fault == Error.FETCH_SESSION_ID_NOT_FOUND:
            cluster.evict_fetch_sessions(ctx.node_id)
        return ctx.response(error_code=next_fault, session_id=0)

    cluster.control(fault, api_key="Fetch", keep=True)


BATCH_TIMESTAMP = 1


def produce(cluster: FakeCluster, partition: int, start: int, end: int, batch: int) -> None:
    """Records ``start``..``end - 1`` of ``partition`` (values ``b"p:o"``), ``batch`` a batch."""
    assert end <= 10, "values of one digit keep every full batch the same size"
    for base in range(start, end, batch):
        values = [b"%d:%d" % (partition, o) for o in range(base, min(base + batch, end))]
        cluster.produce("t", partition, values, timestamp=BATCH_TIMESTAMP)


def batch_size(batch: int) -> int:
    """The bytes of a full batch of ``produce``: as ``max_partition_fetch_bytes``, each Fetch
    returns one batch per partition, so a log takes several fetches."""
    builder = RecordBatchBuilder()
    for _ in range(batch):
        builder.append(None, b"0:0", timestamp=BATCH_TIMESTAMP)
    return len(builder.build())


def offsets_of(records: list[ConsumerRecord]) -> dict[int, list[int]]:
    got: dict[int, list[int]] = {}
    for r in records:
        assert r.value == b"%d:%d" % (r.partition, r.offset)
        got.setdefault(r.partition, []).append(r.offset)
    return got


@contextlib.asynccontextmanager
async def fake(
    logs: Sequence[int], *, batch: int = 3, sessions: bool = True
) -> AsyncIterator[FakeCluster]:
    """One broker leading topic ``t``, partition ``p`` holding ``logs[p]`` records."""
    async with FakeCluster(1, fetch_session_cache_slots=1000 if sessions else 0) as cluster:
        cluster.create_topic("t", len(logs))
        for p, count in enumerate(logs):
            produce(cluster, p, 0, count, batch)
        yield cluster


def consumer_of(cluster: FakeCluster, *, batch: int = 3) -> Consumer:
    return Consumer(
        bootstrap_servers=cluster.bootstrap, max_partition_fetch_bytes=batch_size(batch), **FAST
    )


@dataclass
class Consumed:
    records: list[ConsumerRecord]
    fetches: list[SeenFetch]
    violations: list[str]


async def consume(
    logs: Sequence[int],
    count: int,
    script: Sequence[Fault] = (),
    *,
    batch: int = 3,
    sessions: bool = True,
) -> Consumed:
    """``count`` records of T0-T2, read from offset 0, the Fetch requests meeting ``script``."""
    async with fake(logs, batch=batch, sessions=sessions) as cluster:
        faults(cluster, script)
        audit = SessionAudit(cluster)
        async with consumer_of(cluster, batch=batch) as consumer:
            consumer.assign([T0, T1, T2])
            for tp in (T0, T1, T2):
                consumer.seek(tp, 0)
            got = await read(consumer, count)
    return Consumed(got, fetches(cluster), audit.violations)


async def test_a_session_sends_only_what_changed() -> None:
    consumed = await consume([9, 0, 0], 9)
    assert offsets_of(consumed.records) == {0: list(range(9))}
    first, *later = consumed.fetches
    assert (first.session_id, first.epoch, sorted(first.offsets)) == (0, 0, [0, 1, 2])
    assert later, "no incremental fetch was sent"
    assert [f.session_id for f in later] == [1] * len(later)
    assert [f.epoch for f in later] == list(range(1, len(later) + 1))
    assert {p for f in later for p in f.offsets} == {0}  # the idle partitions are never resent
    assert consumed.violations == []


async def test_pause_resume_and_unassign_forget_and_add_partitions() -> None:
    async with fake([0, 0, 0]) as cluster:
        audit = SessionAudit(cluster)
        async with consumer_of(cluster) as consumer:
            consumer.assign([T0, T1, T2])
            for tp in (T0, T1, T2):
                consumer.seek(tp, 0)
            await fetch_where(cluster, lambda f: f.epoch >= 1)
            consumer.pause(T1)
            paused = await fetch_where(cluster, lambda f: 1 in f.forgotten)
            consumer.resume(T1)
            await fetch_where(cluster, lambda f: f.epoch > paused.epoch and 1 in f.offsets)
            consumer.assign([T0])
            await fetch_where(cluster, lambda f: sorted(f.forgotten) == [1, 2])
            after = len(fetches(cluster))
            await fetch_where(cluster, lambda f: len(fetches(cluster)) > after + 1)
    assert paused.offsets == {}
    assert not paused.full
    assert all(set(f.offsets) <= {0} for f in fetches(cluster)[after:])
    assert audit.violations == []


@pytest.mark.parametrize("code", [70, 71])
async def test_a_lost_session_falls_back_to_a_full_fetch(code: int) -> None:
    consumed = await consume([9, 4, 0], 13, ["ok", "ok", code])
    assert offsets_of(consumed.records) == {0: list(range(9)), 1: list(range(4))}
    seen = consumed.fetches
    refused = seen[2]
    assert not refused.full
    retry = seen[3]
    assert retry.full
    assert sorted(retry.offsets) == [0, 1, 2]  # every partition, at the positions reached
    assert retry.session_id == (0 if code == 70 else refused.session_id)
    assert seen[4].session_id == 2  # the new session
    assert consumed.violations == []


async def test_a_broker_without_sessions_gets_full_fetches() -> None:
    consumed = await consume([7, 2, 0], 9, sessions=False)
    assert offsets_of(consumed.records) == {0: list(range(7)), 1: [0, 1]}
    assert all((f.session_id, f.epoch) == (0, 0) for f in consumed.fetches)
    assert all(sorted(f.offsets) == [0, 1, 2] for f in consumed.fetches)


class UnaskedPartition:
    """A Fetch hook, idle until ``arm(records)``: then the next Fetch is answered after
    ``records()`` wrote records for it, and its answer names ``partition`` too (not asked for,
    nor in the session); ``answered`` is set once it went. Put it before the audit."""

    def __init__(self, cluster: FakeCluster, partition: int) -> None:
        self.partition = partition
        self.answered = asyncio.Event()
        self._records: Callable[[], None] | None = None
        cluster.control(self._answer, api_key="Fetch", keep=True)

    def arm(self, records: Callable[[], None]) -> None:
        self._records = records

    async def _answer(self, request: Any, ctx: HookContext) -> Any:
        if self._records is None:
            return None
        self._records()
        ctx.remove()
        response = await ctx.handle()
        self.answered.set()
        topic = response.responses[0]
        extra = dataclasses.replace(
            topic.partitions[0], partition_index=self.partition, high_watermark=0, records=None
        )
        unasked = dataclasses.replace(topic, partitions=(*topic.partitions, extra))
        return dataclasses.replace(response, responses=(unasked, *response.responses[1:]))


async def test_an_answer_for_a_partition_outside_the_session_is_dropped() -> None:
    async with fake([0, 0, 0, 0]) as cluster:
        unasked = UnaskedPartition(cluster, 3)
        audit = SessionAudit(cluster)
        async with consumer_of(cluster) as consumer:
            consumer.assign([T0, T1, T2])
            for tp in (T0, T1, T2):
                consumer.seek(tp, 0)
            opened = await fetch_where(cluster, lambda f: f.epoch >= 1)
            # The records come in the answer that names partition 3: they must come again.
            unasked.arm(lambda: produce(cluster, 0, 0, 6, 3))
            await asyncio.wait_for(unasked.answered.wait(), WAIT)
            got = await read(consumer, 6)
    assert offsets_of(got) == {0: list(range(6))}
    seen = fetches(cluster)
    after = seen[seen.index(opened) :]
    assert any(f.full and f.session_id == 1 for f in after)  # started over
    assert audit.violations == []


async def test_sessions_by_topic_id_forget_by_topic_id() -> None:
    async with fake([0, 0, 0]) as cluster:
        audit = SessionAudit(cluster)
        async with consumer_of(cluster) as consumer:
            consumer.assign([T0, T1])
            for tp in (T0, T1):
                consumer.seek(tp, 0)
            await fetch_where(cluster, lambda f: f.epoch >= 1)
            consumer.assign([T0])
            forgot = await fetch_where(cluster, lambda f: f.forgotten == [1])
        request = [r for r in cluster.requests.of("Fetch") if SeenFetch.of(r.request) == forgot][-1]
    assert request.api_version >= 13
    assert [t.topic_id for t in request.request.forgotten_topics_data] == [cluster.topic_id("t")]
    assert not forgot.full
    assert audit.violations == []


FAULTS: list[Fault] = ["ok", "ok", "ok", 70, 71, "drop"]


@settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    script=st.lists(st.sampled_from(FAULTS), max_size=12),
    logs=st.lists(st.integers(0, 8), min_size=3, max_size=3),
    batch=st.integers(1, 4),
)
def test_every_record_once_in_order_whatever_the_session_errors(
    script: list[Fault], logs: list[int], batch: int
) -> None:
    consumed = asyncio.run(consume(logs, sum(logs), script, batch=batch))
    expected = {p: list(range(n)) for p, n in enumerate(logs) if n}
    assert offsets_of(consumed.records) == expected
    assert consumed.violations == []


async def test_the_audit_can_fail() -> None:
    """The audit notices a client that breaks the protocol (here: an incremental fetch on a
    session the broker never opened)."""
    async with fake([3, 0, 0]) as cluster:
        audit = SessionAudit(cluster)
        async with Wire(cluster) as wire:
            await wire.send(
                fetch_v12.FetchRequest(max_wait_ms=0, session_id=5, session_epoch=2, topics=())
            )
    assert audit.violations == ["FETCH_SESSION_ID_NOT_FOUND for session 5 at epoch 2"]
