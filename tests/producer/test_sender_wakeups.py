"""The sender's loop is not woken as each Produce request ends, only by what lets something go:
each turn sets its alarm for what it left (the batch behind one sent, batches that did not fit
in a request, a lingering batch). Here the loop's idle check (once a second) is pushed an hour
away: whatever relied on it would hang, and fails at WAIT instead."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire.net import Connection
from kafkawire.producer import Producer
from kafkawire.producer import sender as sender_module
from kafkawire.records import decode_batches
from kafkawire.testing.fake import FakeCluster, HookContext
from kafkawire.testing.fake.faults import answer_partitions, delay, partition_answer
from tests.net.fakebroker import WAIT

VALUES = [b"value-%04d" % i for i in range(300)]


@pytest.fixture(autouse=True)
def no_idle_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sender_module, "_IDLE", 3600.0)


def _values(fake: FakeCluster, topic: str, partition: int) -> list[bytes | None]:
    return [r.value for r in fake.records(topic, partition)]


@pytest.mark.parametrize("idempotent", [True, False])
async def test_a_backlog_of_full_batches_goes_without_a_wakeup_per_request(
    fake_cluster: FakeCluster, idempotent: bool
) -> None:
    """One batch per partition goes at a turn; the rest of a backlog (send_batch queues
    several batches at once, flush makes the last one ready) at the next turns, below the
    limit of requests in flight."""
    fake_cluster.create_topic("t")
    async with Producer(
        fake_cluster.bootstrap, batch_size=2_000, linger_ms=60_000, enable_idempotence=idempotent
    ) as producer:
        await producer.send_batch("t", VALUES, partition=0)
        await asyncio.wait_for(producer.flush(), WAIT)
    assert _values(fake_cluster, "t", 0) == VALUES


async def test_the_requests_of_a_turn_go_out_in_one_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Batches that need a request each (one fits in max_request_size) go at one turn,
    written to the socket together."""
    written: list[int] = []  # frames per socket write of a corked connection
    uncork = Connection.uncork

    def counted(connection: Connection) -> int:
        frames = uncork(connection)
        written.append(frames)
        return frames

    monkeypatch.setattr(Connection, "uncork", counted)
    async with FakeCluster(num_brokers=1) as fake:
        fake.create_topic("t", 3)
        async with Producer(
            fake.bootstrap, batch_size=2_000, linger_ms=60_000, max_request_size=1_000
        ) as producer:
            await producer.send("t", b"first", partition=0)
            await asyncio.wait_for(producer.flush(), WAIT)  # the connection is open
            for partition in range(3):  # a lingering batch each
                await producer.send_batch("t", VALUES[:40], partition=partition)
            written.clear()
            await asyncio.wait_for(producer.flush(), WAIT)  # all three ready at once
        assert written == [3]
        assert [len(_values(fake, "t", p)) for p in range(3)] == [41, 40, 40]


async def test_batches_that_did_not_fit_in_a_request_go_at_the_next_turn(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t", 3)
    async with Producer(
        fake_cluster.bootstrap,
        batch_size=1_000,
        linger_ms=60_000,
        max_request_size=1_500,  # one batch per request: the other partitions wait their turn
    ) as producer:
        await producer.send_batch("t", VALUES[:90], keys=[b"%d" % i for i in range(90)])
        await asyncio.wait_for(producer.flush(), WAIT)
    assert sum(len(_values(fake_cluster, "t", p)) for p in range(3)) == 90


async def test_the_batch_behind_one_sent_goes_when_its_linger_ends(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, batch_size=500, linger_ms=20) as producer:
        deliveries = [await producer.send("t", v, partition=0) for v in VALUES[:30]]
        # The first batches are full and go; the last lingers, then goes with no wakeup.
        await asyncio.wait_for(asyncio.gather(*deliveries), WAIT)
    assert _values(fake_cluster, "t", 0) == VALUES[:30]


async def test_a_partition_at_its_in_flight_limit_goes_on_as_requests_end(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(delay(0.02), api_key="Produce", keep=True)
    async with Producer(
        fake_cluster.bootstrap,
        batch_size=200,
        linger_ms=0,
        max_in_flight_requests_per_connection=1,
    ) as producer:
        deliveries = [await producer.send("t", v, partition=0) for v in VALUES[:60]]
        await asyncio.wait_for(asyncio.gather(*deliveries), WAIT)
    assert _values(fake_cluster, "t", 0) == VALUES[:60]


async def test_a_retried_batch_goes_after_its_backoff(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(answer_partitions(6), api_key="Produce")  # NOT_LEADER_OR_FOLLOWER, once
    async with Producer(fake_cluster.bootstrap, linger_ms=0, retry_backoff_ms=5) as producer:
        delivered = await asyncio.wait_for(producer.send_and_wait("t", b"v", partition=0), WAIT)
    assert delivered.offset == 0


async def test_a_batch_sent_again_goes_alone_until_it_is_answered(
    fake_cluster: FakeCluster,
) -> None:
    """A partition's newer batches follow a batch sent again once it is answered: a broker
    that refuses it again but takes a newer one (a leader with no state for the producer
    accepts any sequence) would leave a gap that no retry can fill."""
    fake_cluster.create_topic("t")
    refusals = 2
    first_refused = asyncio.Event()
    events: list[tuple[str, int]] = []

    async def record(request: Any, ctx: HookContext) -> Any:
        nonlocal refusals
        [topic] = request.topic_data
        [data] = topic.partition_data
        [batch] = decode_batches(data.records)
        events.append(("in", batch.base_sequence))
        if refusals:
            refusals -= 1
            first_refused.set()
            return partition_answer(request, ctx, 6)  # NOT_LEADER_OR_FOLLOWER
        await ctx.sleep(0.02)
        answer = await ctx.handle()
        events.append(("out", batch.base_sequence))
        return answer

    fake_cluster.control(record, api_key="Produce", keep=True)
    async with Producer(
        fake_cluster.bootstrap, batch_size=50, linger_ms=0, retry_backoff_ms=1
    ) as producer:
        deliveries = [await producer.send("t", VALUES[0], partition=0)]
        await asyncio.wait_for(first_refused.wait(), WAIT)
        deliveries += [await producer.send("t", v, partition=0) for v in VALUES[1:6]]
        await asyncio.wait_for(asyncio.gather(*deliveries), WAIT)
    assert _values(fake_cluster, "t", 0) == VALUES[:6]
    assert events[:3] == [("in", 0)] * 3  # refused twice, then taken
    assert events.index(("out", 0)) < events.index(("in", 1))
