"""Leader epochs in the fetcher, on the fake cluster (its leaders keep epochs as Kafka's do):
the epoch sent with each Fetch and ListOffsets, fenced and unknown epochs, and the position
checked against the leader's log after a leader change (KIP-320), by OffsetForLeaderEpoch or a
diverging epoch."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kafkawire.consumer import Consumer, ConsumerRecord, LogTruncationError, TopicPartition
from kafkawire.testing.fake import CUT, FakeCluster, HookContext
from kafkawire.testing.fake.build import part
from kafkawire.testing.fake.faults import answer_partitions

T0 = TopicPartition("t", 0)
FAST = {"retry_backoff_ms": 1, "fetch_max_wait_ms": 20}
OFFSET_FOR_LEADER_EPOCH = "OffsetForLeaderEpoch"


def write(cluster: FakeCluster, count: int, prefix: bytes = b"") -> None:
    """``count`` records on ``t/0``, one batch each (a truncation keeps whole batches), valued
    ``prefix`` and their offset, stamped with the leader epoch they are written in."""
    for _ in range(count):
        cluster.produce("t", 0, [prefix + b"%d" % cluster.offsets("t", 0).high_watermark])


def at_epoch(cluster: FakeCluster, epoch: int) -> None:
    """Leadership of ``t/0`` moves on (on the same broker) until its epoch is ``epoch``."""
    while cluster.leader("t", 0)[1] < epoch:
        cluster.move_leader("t", 0, cluster.leader("t", 0)[0])


def current_epochs(cluster: FakeCluster, api: str) -> list[int]:
    """The leader epoch each request of ``api`` said it knows for ``t/0``."""
    return [
        r.request.topics[0].partitions[0].current_leader_epoch for r in cluster.requests.of(api)
    ]


def moving_on_first(cluster: FakeCluster, epoch: int) -> Any:
    """A hook: the first request it sees finds leadership moved on to ``epoch`` (so the epoch
    the client had from the metadata is fenced); the handler answers."""

    def move(request: Any, ctx: HookContext) -> None:
        at_epoch(cluster, epoch)
        ctx.remove()

    return move


async def take(consumer: Consumer, count: int) -> list[ConsumerRecord]:
    """Exactly ``count`` more records of T0 (fails after 10 s)."""
    got: list[ConsumerRecord] = []

    async def collect() -> None:
        while len(got) < count:
            batch = await consumer.getmany(timeout_ms=200, max_records=count - len(got))
            got.extend(batch.get(T0, []))

    await asyncio.wait_for(collect(), 10)
    return got


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    async with FakeCluster(1) as cluster:
        cluster.create_topic("t")
        yield cluster


async def test_a_fenced_leader_epoch_refreshes_the_metadata(cluster: FakeCluster) -> None:
    at_epoch(cluster, 3)
    write(cluster, 2)
    cluster.control(moving_on_first(cluster, 5), api_key="Fetch")
    async with Consumer(bootstrap_servers=cluster.bootstrap, **FAST) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 0)
        got = await take(consumer, 2)
    assert [r.value for r in got] == [b"0", b"1"]
    sent = current_epochs(cluster, "Fetch")
    assert sent[0] == 3  # what the metadata said: the broker fenced it
    assert set(sent[1:]) == {5}
    first_fetch = cluster.requests.index(cluster.requests.of("Fetch")[0])
    assert any(r.api_name == "Metadata" for r in cluster.requests[first_fetch:])


async def test_an_unknown_leader_epoch_is_retried_until_the_broker_catches_up(
    cluster: FakeCluster,
) -> None:
    at_epoch(cluster, 5)
    write(cluster, 2)
    refusals = 0

    def behind(request: Any) -> bool:
        nonlocal refusals
        refusals += 1
        return refusals <= 3  # three answers of UNKNOWN_LEADER_EPOCH, then caught up

    cluster.control(answer_partitions(75, when=behind), api_key="Fetch", keep=True)
    async with Consumer(bootstrap_servers=cluster.bootstrap, **FAST) as consumer:
        consumer.assign([T0])
        consumer.seek(T0, 0)
        got = await take(consumer, 2)
    assert [r.value for r in got] == [b"0", b"1"]
    assert [r.leader_epoch for r in got] == [5, 5]
    assert current_epochs(cluster, "Fetch")[:4] == [5, 5, 5, 5]  # the same epoch, again
    assert refusals >= 4


async def test_list_offsets_carries_the_leader_epoch(cluster: FakeCluster) -> None:
    at_epoch(cluster, 6)
    cluster.control(moving_on_first(cluster, 8), api_key="ListOffsets")
    async with Consumer(bootstrap_servers=cluster.bootstrap, **FAST) as consumer:
        assert await consumer.beginning_offsets([T0]) == {T0: 0}
    assert current_epochs(cluster, "ListOffsets") == [6, 8]


@contextlib.asynccontextmanager
async def three_read_at_epoch_3(
    policy: Any, **config: Any
) -> AsyncIterator[tuple[FakeCluster, Consumer]]:
    """A consumer (``auto_offset_reset=policy``) that has read the 3 records written at
    leader epoch 3, and its cluster (one broker, ``config`` for the rest)."""
    async with FakeCluster(1, **config) as cluster:
        cluster.create_topic("t")
        at_epoch(cluster, 3)
        write(cluster, 3)
        async with Consumer(
            bootstrap_servers=cluster.bootstrap, auto_offset_reset=policy, **FAST
        ) as consumer:
            consumer.assign([T0])
            consumer.seek(T0, 0)
            first = await take(consumer, 3)
            assert [r.leader_epoch for r in first] == [3, 3, 3]
            yield cluster, consumer


@pytest.mark.parametrize("policy", ["earliest", "none"])
async def test_a_position_is_validated_after_a_leader_change(policy: Any) -> None:
    async with three_read_at_epoch_3(policy) as (cluster, consumer):
        at_epoch(cluster, 4)  # the next Fetch (at epoch 3) is fenced
        write(cluster, 2, b"new")  # the new leader kept all three and writes on
        got = await take(consumer, 2)
    assert [(r.offset, r.value, r.leader_epoch) for r in got] == [(3, b"new3", 4), (4, b"new4", 4)]
    [asked] = [r.request for r in cluster.requests.of(OFFSET_FOR_LEADER_EPOCH)]
    wanted = asked.topics[0].partitions[0]
    assert (wanted.leader_epoch, wanted.current_leader_epoch) == (3, 4)
    assert asked.replica_id == -1


async def test_a_truncated_log_moves_the_position_back_to_where_it_parts() -> None:
    async with three_read_at_epoch_3("latest") as (cluster, consumer):
        cluster.truncate("t", 0, 1)  # the new leader (epoch 4) has only offset 0 of epoch 3
        write(cluster, 3, b"new")  # ... and writes offsets 1-3 anew
        got = await take(consumer, 3)
        position = await consumer.position(T0)
    assert [(r.offset, r.value) for r in got] == [(1, b"new1"), (2, b"new2"), (3, b"new3")]
    assert position == 4


async def test_a_truncated_log_without_a_reset_policy_is_an_error() -> None:
    async with three_read_at_epoch_3("none") as (cluster, consumer):
        cluster.truncate("t", 0, 1)
        write(cluster, 3, b"new")
        with pytest.raises(LogTruncationError, match="t/0 at offset 3") as raised:
            await take(consumer, 1)
        assert (raised.value.partition, raised.value.offset) == (T0, 3)
        assert raised.value.divergent_offset == 1
        consumer.seek(T0, 1)  # the application decides: read the new records
        got = await take(consumer, 3)
    assert [r.value for r in got] == [b"new1", b"new2", b"new3"]


def diverging_once(epoch: int, end_offset: int) -> Any:
    """A Fetch hook: the next Fetch of ``t/0`` the leader answers without an error gets a
    diverging epoch instead, ``epoch`` ending at ``end_offset`` in the leader's log, and no
    records. (Kafka answers one only to a Fetch naming its last fetched epoch, which Java's
    consumer, as kafkawire's, never sends; the consumer handles one all the same.)"""

    async def answer(request: Any, ctx: HookContext) -> Any:
        response = await ctx.handle()
        topic = response.responses[0] if response.responses else None
        if topic is None or topic.partitions[0].error_code:
            return None  # the handler's answer goes; the next Fetch is looked at
        ctx.remove()
        data = part(type(topic), "partitions")
        diverged = dataclasses.replace(
            topic.partitions[0],
            records=None,
            diverging_epoch=part(data, "diverging_epoch")(epoch=epoch, end_offset=end_offset),
        )
        return dataclasses.replace(
            response, responses=(dataclasses.replace(topic, partitions=(diverged,)),)
        )

    return answer


@pytest.mark.parametrize("policy", ["earliest", "none"])
async def test_a_diverging_epoch_in_a_fetch_answer(policy: Any) -> None:
    """On a broker without OffsetForLeaderEpoch, which cannot validate the position after the
    leader change, the Fetch answer's diverging epoch moves it back."""
    no_validation = {"api_versions": {23: range(0)}}
    async with three_read_at_epoch_3(policy, **no_validation) as (cluster, consumer):
        cluster.truncate("t", 0, 2)  # epoch 3 ends at offset 2 in the new leader's log
        write(cluster, 2, b"new")
        cluster.control(diverging_once(3, 2), api_key="Fetch")
        if policy == "none":
            with pytest.raises(LogTruncationError) as raised:
                await take(consumer, 1)
            assert raised.value.divergent_offset == 2
        else:
            got = await take(consumer, 2)
            assert [(r.offset, r.value) for r in got] == [(2, b"new2"), (3, b"new3")]
    assert cluster.requests.of(OFFSET_FOR_LEADER_EPOCH) == []  # the Fetch answer said it all


async def test_validation_is_retried_after_a_lost_connection() -> None:
    async with three_read_at_epoch_3("earliest") as (cluster, consumer):
        cluster.control(lambda request, ctx: CUT, api_key=OFFSET_FOR_LEADER_EPOCH)  # once
        at_epoch(cluster, 4)
        write(cluster, 2, b"new")
        got = await take(consumer, 2)
    assert [r.offset for r in got] == [3, 4]
    cut, answered = cluster.requests.of(OFFSET_FOR_LEADER_EPOCH)  # the cut one, then again
    assert cut.connection_id != answered.connection_id
