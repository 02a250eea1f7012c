"""Fetch sessions (KIP-227) on the wire: as Kafka's broker keeps them, and kafkawire's consumer
in them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkawire.consumer import Consumer
from kafkawire.messages.fetch import v12 as fetch_v12
from kafkawire.messages.fetch import v13 as fetch_v13
from kafkawire.testing.fake import Error, FakeCluster

from .wire import Wire

Partitions = list[tuple[int, int]]  # (partition, fetch offset)


def fetch(
    session_id: int,
    epoch: int,
    partitions: Partitions = (),  # type: ignore[assignment]
    forgotten: tuple[int, ...] = (),
    max_bytes: int = 1 << 20,
) -> Any:
    return fetch_v12.FetchRequest(
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=max_bytes,
        session_id=session_id,
        session_epoch=epoch,
        topics=(
            fetch_v12.FetchTopic(
                topic="t",
                partitions=tuple(
                    fetch_v12.FetchPartition(
                        partition=p, fetch_offset=offset, partition_max_bytes=1 << 20
                    )
                    for p, offset in partitions
                ),
            ),
        )
        if partitions
        else (),
        forgotten_topics_data=(fetch_v12.ForgottenTopic(topic="t", partitions=forgotten),)
        if forgotten
        else (),
    )


def named(response: Any) -> list[tuple[int, int]]:
    """(partition, high watermark) of each partition an answer names."""
    return [(p.partition_index, p.high_watermark) for t in response.responses for p in t.partitions]


@pytest.fixture
async def wire(fake_cluster: FakeCluster) -> Any:
    fake_cluster.create_topic("t", partitions=3, replication_factor=1)
    for p in range(3):
        fake_cluster.move_leader("t", p, 0)
    async with Wire(fake_cluster, 0) as wire:
        yield wire


async def test_a_full_fetch_opens_a_session_and_incremental_ones_name_only_news(
    fake_cluster: FakeCluster, wire: Wire
) -> None:
    full = await wire.send(fetch(0, 0, [(0, 0), (1, 0), (2, 0)]))
    assert full.error_code == 0
    assert full.session_id > 0
    assert named(full) == [(0, 0), (1, 0), (2, 0)]
    session = full.session_id
    quiet = await wire.send(fetch(session, 1))
    assert (quiet.session_id, named(quiet)) == (session, [])
    fake_cluster.produce("t", 1, [b"a"])
    news = await wire.send(fetch(session, 2))
    assert named(news) == [(1, 1)]
    assert len(news.responses[0].partitions[0].records) > 0
    # The session still fetches partition 1 at offset 0 (the offset last sent): the record
    # comes again, until the client sends the new offset.
    again = await wire.send(fetch(session, 3))
    assert named(again) == [(1, 1)]
    moved = await wire.send(fetch(session, 4, [(1, 1)]))
    assert named(moved) == []


async def test_wrong_epochs_and_unknown_sessions(wire: Wire) -> None:
    session = (await wire.send(fetch(0, 0, [(0, 0)]))).session_id
    wrong = await wire.send(fetch(session, 5))
    unknown = await wire.send(fetch(session + 100, 1))
    assert (wrong.error_code, wrong.session_id, wrong.responses) == (
        Error.INVALID_FETCH_SESSION_EPOCH,
        0,
        (),
    )
    assert unknown.error_code == Error.FETCH_SESSION_ID_NOT_FOUND
    assert (await wire.send(fetch(session, 1))).error_code == 0  # the session lives on


async def test_forgotten_partitions_leave_and_an_empty_session_closes(
    fake_cluster: FakeCluster, wire: Wire
) -> None:
    session = (await wire.send(fetch(0, 0, [(0, 0), (1, 0)]))).session_id
    await wire.send(fetch(session, 1, forgotten=(0,)))
    fake_cluster.produce("t", 0, [b"a"])
    fake_cluster.produce("t", 1, [b"b"])
    assert named(await wire.send(fetch(session, 2))) == [(1, 1)]
    closed = await wire.send(fetch(session, 3, forgotten=(1,)))
    assert (closed.error_code, closed.session_id) == (0, 0)
    assert (await wire.send(fetch(session, 4))).error_code == Error.FETCH_SESSION_ID_NOT_FOUND


async def test_epoch_zero_replaces_a_session_and_minus_one_keeps_none(wire: Wire) -> None:
    first = (await wire.send(fetch(0, 0, [(0, 0)]))).session_id
    second = await wire.send(fetch(first, 0, [(1, 0)]))
    assert second.session_id not in (0, first)
    assert (await wire.send(fetch(first, 1))).error_code == Error.FETCH_SESSION_ID_NOT_FOUND
    sessionless = await wire.send(fetch(second.session_id, -1, [(2, 0)]))
    assert (sessionless.session_id, named(sessionless)) == (0, [(2, 0)])
    assert (await wire.send(fetch(second.session_id, 1))).error_code == (
        Error.FETCH_SESSION_ID_NOT_FOUND
    )


async def test_a_session_by_names_refuses_a_fetch_by_ids(
    fake_cluster: FakeCluster, wire: Wire
) -> None:
    session = (await wire.send(fetch(0, 0, [(0, 0)]))).session_id
    by_id = fetch_v13.FetchRequest(max_wait_ms=0, min_bytes=0, session_id=session, session_epoch=1)
    assert (await wire.send(by_id)).error_code == Error.FETCH_SESSION_TOPIC_ID_ERROR


async def test_partitions_with_records_go_to_the_back_of_the_session(
    fake_cluster: FakeCluster, wire: Wire
) -> None:
    for p in range(3):
        fake_cluster.produce("t", p, [b"x" * 100])
    session = (await wire.send(fetch(0, 0, [(0, 1), (1, 1), (2, 1)]))).session_id
    size = len(fake_cluster.state.partition("t", 0).log.batches[0].data)  # type: ignore[union-attr]
    # Room for one batch per fetch; each partition is re-sent at offset 0.
    order = []
    for epoch in range(1, 4):
        response = await wire.send(
            fetch(session, epoch, [(0, 0), (1, 0), (2, 0)] if epoch == 1 else [], max_bytes=size)
        )
        order.append(
            [p.partition_index for t in response.responses for p in t.partitions if p.records]
        )
    assert order == [[0], [1], [2]]


async def test_no_free_slot_no_session() -> None:
    async with FakeCluster(1, fetch_session_cache_slots=1) as cluster:
        cluster.create_topic("t", partitions=3)
        async with Wire(cluster) as wire:
            first = await wire.send(fetch(0, 0, [(0, 0)]))
            second = await wire.send(fetch(0, 0, [(1, 0)]))
    assert first.session_id > 0
    assert second.session_id == 0


async def test_the_consumer_fetches_incrementally(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t", partitions=2, replication_factor=1)
    fake_cluster.move_leader("t", 1, fake_cluster.leader("t", 0)[0])  # one leader, one session
    async with Consumer(
        "t",
        bootstrap_servers=fake_cluster.bootstrap,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=20,
    ) as consumer:
        for i in range(3):
            fake_cluster.produce("t", i % 2, [b"v%d" % i])
            got = await asyncio.wait_for(consumer.getmany(timeout_ms=500), 5)
            while not got:
                got = await asyncio.wait_for(consumer.getmany(timeout_ms=500), 5)
    epochs = [r.request.session_epoch for r in fake_cluster.requests.of("Fetch")]
    sessions = {r.request.session_id for r in fake_cluster.requests.of("Fetch")}
    assert epochs[:3] == [0, 1, 2]
    assert len(sessions - {0}) == 1
