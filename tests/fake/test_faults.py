"""The ready-made fault hooks (``kafkawire.testing.fake.faults``) and the cluster's handles for
fault tests: crafted batches in a log, evicted fetch sessions, a moved coordinator, partitions
added, requests waited for by what they say."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import Any

import pytest

from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.errors import UnknownMemberIdError
from kafkawire.messages.fetch import v4 as fetch_v4
from kafkawire.messages.fetch import v16 as fetch_v16
from kafkawire.messages.find_coordinator import v6 as find_v6
from kafkawire.messages.list_offsets import v1 as list_offsets_v1
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.messages.offset_fetch import v7 as offset_fetch_v7
from kafkawire.messages.produce import v3 as produce_v3
from kafkawire.records import RecordBatchBuilder, decode_batches
from kafkawire.testing.fake import Error, FakeCluster, FakeClusterError, HookContext
from kafkawire.testing.fake.faults import (
    answer_partitions,
    delay,
    hold,
    leave_out_topic,
    metadata_brokers,
    refuse_partition,
    refuse_topic,
)

from .wire import Wire, batch


def fetch_v4_request(*partitions: int) -> Any:
    return fetch_v4.FetchRequest(
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=1 << 20,
        topics=(
            fetch_v4.FetchTopic(
                topic="t",
                partitions=tuple(
                    fetch_v4.FetchPartition(partition=p, partition_max_bytes=1 << 20)
                    for p in partitions
                ),
            ),
        ),
    )


def fetch_v16_request(
    topic_id: uuid.UUID, *partitions: int, epoch: int = 0, session: int = 0
) -> Any:
    return fetch_v16.FetchRequest(
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=1 << 20,
        session_id=session,
        session_epoch=epoch,
        topics=(
            fetch_v16.FetchTopic(
                topic_id=topic_id,
                partitions=tuple(
                    fetch_v16.FetchPartition(partition=p, partition_max_bytes=1 << 20)
                    for p in partitions
                ),
            ),
        )
        if partitions
        else (),
    )


def produce_request(value: bytes) -> Any:
    return produce_v3.ProduceRequest(
        acks=-1,
        timeout_ms=1000,
        topic_data=(
            produce_v3.TopicProduceData(
                name="t",
                partition_data=(
                    produce_v3.PartitionProduceData(index=0, records=batch(value)),
                    produce_v3.PartitionProduceData(index=1, records=batch(value)),
                ),
            ),
        ),
    )


def answered(response: Any) -> list[tuple[int, int, int]]:
    """(partition, error code, high watermark) of each partition of a Fetch answer."""
    return [
        (p.partition_index, p.error_code, p.high_watermark)
        for t in response.responses
        for p in t.partitions
    ]


@pytest.fixture
async def cluster() -> Any:
    async with FakeCluster(1) as cluster:
        cluster.create_topic("t", 2)
        cluster.produce("t", 0, [b"a", b"b"])
        yield cluster


async def test_answer_partitions_answers_every_partition_asked_without_the_handler(
    cluster: FakeCluster,
) -> None:
    topic_id = cluster.topic_id("t")
    cluster.control(answer_partitions(6), api_key="Fetch", keep=True)
    async with Wire(cluster) as wire:
        old = await wire.send(fetch_v4_request(0, 1))
        new = await wire.send(fetch_v16_request(topic_id, 1))
    assert old.responses[0].topic == "t"
    assert answered(old) == [(0, 6, -1), (1, 6, -1)]  # Kafka's -1 for a refused partition
    assert old.responses[0].partitions[0].records in (None, b"")  # nothing was read
    assert new.responses[0].topic_id == topic_id
    assert (answered(new), new.session_id) == ([(1, 6, -1)], 0)  # no session was opened
    assert cluster.services.fetch_sessions[0].sessions == {}


async def test_answer_partitions_writes_nothing_and_when_picks_requests(
    cluster: FakeCluster,
) -> None:
    cluster.control(
        answer_partitions(87, when=lambda request: request.acks == -1), api_key="Produce", keep=True
    )
    async with Wire(cluster) as wire:
        refused = await wire.send(produce_request(b"x"))
        taken = await wire.send(dataclasses.replace(produce_request(b"y"), acks=1))
    assert [
        (p.index, p.error_code, p.base_offset) for p in refused.responses[0].partition_responses
    ] == [
        (0, 87, -1),
        (1, 87, -1),
    ]
    assert [p.error_code for p in taken.responses[0].partition_responses] == [0, 0]
    assert [r.value for r in cluster.records("t", 0)] == [b"a", b"b", b"y"]


async def test_answer_partitions_for_list_offsets_and_offset_commit(cluster: FakeCluster) -> None:
    cluster.control(answer_partitions(29), api_key="ListOffsets")
    cluster.control(answer_partitions(25), api_key="OffsetCommit")
    offsets = list_offsets_v1.ListOffsetsRequest(
        replica_id=-1,
        topics=(
            list_offsets_v1.ListOffsetsTopic(
                name="t", partitions=(list_offsets_v1.ListOffsetsPartition(timestamp=-1),)
            ),
        ),
    )
    async with Wire(cluster) as wire:
        listed = await wire.send(offsets)
    (partition,) = listed.topics[0].partitions
    assert (listed.topics[0].name, partition.error_code, partition.offset) == ("t", 29, -1)
    t1 = TopicPartition("t", 1)
    async with Consumer(bootstrap_servers=cluster.bootstrap, group_id="g") as consumer:
        with pytest.raises(UnknownMemberIdError):
            await consumer.commit({t1: 5})
        assert await consumer.committed(t1) is None  # the handler never saw the commit


async def test_answer_partitions_of_an_api_without_partitions_fails_the_test() -> None:
    async def run() -> None:
        async with FakeCluster(1) as cluster:
            cluster.control(answer_partitions(1), api_key="Metadata")
            async with Wire(cluster) as wire:
                wire.write(metadata_v12.MetadataRequest(topics=None))
                assert await wire.closed()

    with pytest.raises(FakeClusterError, match="API key 3 is not one whose partitions"):
        await run()


async def test_refuse_partition_changes_one_partition_of_the_handlers_answer(
    cluster: FakeCluster,
) -> None:
    cluster.control(refuse_partition(1, 87), api_key="Produce")
    cluster.control(refuse_partition(0, 6), api_key="Fetch")  # v4 has no log start offset
    async with Wire(cluster) as wire:
        produced = await wire.send(produce_request(b"x"))
        fetched = await wire.send(fetch_v4_request(0, 1))
    assert [
        (p.index, p.error_code, p.base_offset) for p in produced.responses[0].partition_responses
    ] == [
        (0, 0, 2),
        (1, 87, -1),
    ]
    assert [r.value for r in cluster.records("t", 1)] == [b"x"]  # the handler wrote it
    assert answered(fetched) == [(0, 6, -1), (1, 0, 1)]


def metadata_of(*names: str) -> metadata_v12.MetadataRequest:
    return metadata_v12.MetadataRequest(
        topics=tuple(metadata_v12.MetadataRequestTopic(name=name) for name in names)
    )


async def test_refuse_topic_in_metadata(cluster: FakeCluster) -> None:
    cluster.create_topic("u")
    cluster.control(refuse_topic("u", 29), api_key="Metadata")
    async with Wire(cluster) as wire:
        answer = await wire.send(metadata_of("t", "u"))
    assert {(t.name, t.error_code, len(t.partitions)) for t in answer.topics} == {
        ("t", 0, 2),
        ("u", 29, 0),
    }


async def test_leave_out_topic_answers_metadata_without_it(cluster: FakeCluster) -> None:
    cluster.create_topic("u")
    cluster.control(leave_out_topic("u"), api_key="Metadata", keep=True)
    async with Wire(cluster) as wire:
        named = await wire.send(metadata_of("t", "u"))
        every = await wire.send(metadata_v12.MetadataRequest(topics=None))
    assert [(t.name, t.error_code) for t in named.topics] == [("t", 0)]
    assert [t.name for t in every.topics] == ["t"]


async def test_metadata_brokers_adds_or_replaces_the_brokers_named() -> None:
    async with FakeCluster(2) as cluster:
        cluster.create_topic("t")
        cluster.control(metadata_brokers([(1, "a\x00b", 9092), (7, "127.0.0.1", 70000)]))
        cluster.control(metadata_brokers([(0, "127.0.0.1", -1)], only=True))
        request = metadata_v12.MetadataRequest(topics=None)
        async with Wire(cluster) as wire:
            added = await wire.send(request)
            only = await wire.send(request)
            own = await wire.send(request)  # both hooks spent
        port = int(cluster.address(0).split(":")[1])
    assert [(b.node_id, b.host, b.port) for b in added.brokers] == [
        (0, "127.0.0.1", port),
        (1, "a\x00b", 9092),  # broker 1's address replaced
        (7, "127.0.0.1", 70000),
    ]
    assert [(b.node_id, b.host, b.port) for b in only.brokers] == [(0, "127.0.0.1", -1)]
    assert only.topics == own.topics  # the leaders stay
    assert [b.node_id for b in own.brokers] == [0, 1]


async def test_hold_answers_once_released_and_delay_late(cluster: FakeCluster) -> None:
    released = asyncio.Event()
    cluster.control(hold(released.wait), api_key="Metadata", keep=True)
    cluster.control(delay(0), api_key="Metadata", keep=True)
    request = metadata_v12.MetadataRequest(topics=None)
    async with Wire(cluster) as wire:
        answering = asyncio.ensure_future(wire.send(request))
        held = await cluster.requests.wait_for("Metadata")
        assert (len(held), answering.done()) == (1, False)
        released.set()
        first, second = await answering, await wire.send(request)
    assert first.brokers == second.brokers  # the second one kept: released from now on


async def test_a_hook_builds_an_answer_at_the_requests_version(cluster: FakeCluster) -> None:
    def unauthorized(request: Any, ctx: HookContext) -> Any:
        return ctx.response(error_code=29, topics=(), not_a_field=1)

    cluster.control(unauthorized, api_key="Metadata")
    async with Wire(cluster) as wire:
        answer = await wire.send(metadata_v12.MetadataRequest(topics=None))
    assert (type(answer), answer.topics) == (metadata_v12.MetadataResponse, ())


def crafted(base: int, count: int, *, last_offset_delta: int) -> bytes:
    """A batch of ``count`` records whose header claims ``last_offset_delta``."""
    builder = RecordBatchBuilder(base_offset=base)
    for i in range(count):
        builder.append(None, b"%d" % (base + i), timestamp=1)
    data = bytearray(builder.build())
    data[23:27] = last_offset_delta.to_bytes(4, "big")  # the crc no longer holds either
    return bytes(data)


async def test_write_batches_keeps_crafted_bytes_as_they_are(cluster: FakeCluster) -> None:
    bad = crafted(2, 3, last_offset_delta=0)  # offsets 2-4; the header says 2 only
    cluster.write_batches("t", 0, bad)
    assert cluster.offsets("t", 0).high_watermark == 5  # the records' end, not the header's
    async with Wire(cluster) as wire:
        fetched = await wire.send(fetch_v4_request(0))
    records = fetched.responses[0].partitions[0].records
    assert bytes(records).endswith(bad)
    (read,) = list(decode_batches(bytes(records)[-len(bad) :], check_crcs=False))
    assert read.last_offset_delta == 0
    with pytest.raises(ValueError, match="offset 3 cannot follow the log end offset 5"):
        cluster.write_batches("t", 0, crafted(3, 1, last_offset_delta=0))
    with pytest.raises(ValueError, match="one v2 record batch"):
        cluster.write_batches("t", 0, bad + bad)


async def test_evicted_fetch_sessions_are_not_found(cluster: FakeCluster) -> None:
    topic_id = cluster.topic_id("t")
    async with Wire(cluster) as wire:
        opened = await wire.send(fetch_v16_request(topic_id, 0))
        assert opened.session_id == 1
        cluster.evict_fetch_sessions()
        refused = await wire.send(fetch_v16_request(topic_id, session=1, epoch=1))
    assert refused.error_code == Error.FETCH_SESSION_ID_NOT_FOUND


async def test_a_moved_coordinator_is_found_and_the_old_one_refuses() -> None:
    async with FakeCluster(2) as cluster:
        before = cluster.coordinator("g")
        other = 1 - before
        cluster.move_coordinator("g", other)
        assert cluster.coordinator("g") == other
        find = find_v6.FindCoordinatorRequest(key_type=0, coordinator_keys=("g",))
        fetch = offset_fetch_v7.OffsetFetchRequest(group_id="g", topics=None)
        async with Wire(cluster, before) as wire:
            found = await wire.send(find)
            refused = await wire.send(fetch)
        async with Wire(cluster, other) as wire:
            served = await wire.send(fetch)
        with pytest.raises(ValueError, match="no broker has node id 7"):
            cluster.move_coordinator("g", 7)
        await cluster.stop_broker(other)
        assert cluster.coordinator("g") == before  # a stopped coordinator moves on
    assert found.coordinators[0].node_id == other
    assert (refused.error_code, served.error_code) == (Error.NOT_COORDINATOR, 0)


async def test_add_partitions_grows_a_topic(cluster: FakeCluster) -> None:
    cluster.add_partitions("t", 3)
    cluster.produce("t", 2, [b"c"])
    assert [r.value for r in cluster.records("t", 2)] == [b"c"]
    with pytest.raises(ValueError, match="t has 3 partitions; 3 is not more"):
        cluster.add_partitions("t", 3)


async def test_wait_for_requests_by_what_they_say(cluster: FakeCluster) -> None:
    async def ask() -> None:
        async with Wire(cluster) as wire:
            for name in ("x", "t", "y"):
                await wire.send(
                    metadata_v12.MetadataRequest(
                        topics=(metadata_v12.MetadataRequestTopic(name=name),)
                    )
                )

    asking = asyncio.create_task(ask())
    found = await cluster.requests.wait_for(
        "Metadata", where=lambda r: r.topics[0].name == "y", timeout=5
    )
    await asking
    assert [r.request.topics[0].name for r in found] == ["y"]
    with pytest.raises(TimeoutError, match="1 matching Metadata request"):
        await cluster.requests.wait_for(
            "Metadata", 2, where=lambda r: r.topics[0].name == "t", timeout=0.01
        )
