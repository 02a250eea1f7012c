"""The spans of an instrumented producer and consumer on the fake cluster: a send span per
record, whose context the record carries to the consumer's receive and process spans."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from kafkawire.cluster import InvalidPartitionError
from kafkawire.consumer import Consumer, ConsumerStateError, TopicPartition
from kafkawire.errors import MessageTooLargeError
from kafkawire.producer import Producer
from kafkawire.records import Header
from kafkawire.testing.fake import FakeCluster

from .conftest import Recorded, getmany_from_start, ids


def traceparent(span: ReadableSpan) -> bytes:
    context = span.get_span_context()
    return b"00-%032x-%016x-%02x" % (context.trace_id, context.span_id, context.trace_flags)


def linked(span: ReadableSpan) -> list[tuple[int, int]]:
    return [ids(link.context) for link in span.links]


def recorded_exception(span: ReadableSpan) -> tuple[str, str]:
    """The type and message of the one exception ``span`` recorded."""
    [event] = [e for e in span.events if e.name == "exception"]
    found = dict(event.attributes or {})
    return str(found["exception.type"]), str(found["exception.message"])


async def test_a_send_span_covers_the_send_until_its_delivery_and_travels_in_the_record(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    fake_cluster.create_topic("orders")
    async with Producer(fake_cluster.bootstrap, client_id="shop") as producer:
        delivery = await producer.send("orders", b"order-1", key=b"k-1")
        assert (delivery.done(), recorded.spans()) == (False, [])
        metadata = await delivery
        span = recorded.span("orders send")
    assert span.kind is SpanKind.PRODUCER
    assert span.parent is None
    assert dict(span.attributes or {}) == {
        "messaging.system": "kafka",
        "messaging.operation.name": "send",
        "messaging.operation.type": "send",
        "messaging.destination.name": "orders",
        "messaging.destination.partition.id": "0",
        "messaging.kafka.offset": metadata.offset,
        "messaging.kafka.message.key": "k-1",
        "messaging.client.id": "shop",
        "server.address": "127.0.0.1",
        "server.port": int(fake_cluster.bootstrap.split(",")[0].rpartition(":")[2]),
    }
    [record] = fake_cluster.records("orders", 0)
    assert record.headers == (Header("traceparent", traceparent(span)),)


async def test_a_process_span_per_record_continues_its_producer_s_trace(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    fake_cluster.create_topic("orders")
    async with Producer(fake_cluster.bootstrap) as producer:
        await producer.send_and_wait("orders", b"order-1", key=b"k-1")
        await producer.send_and_wait("orders", None)  # a tombstone
    [first_send, second_send] = recorded.spans("orders send")
    async with Consumer(
        "orders",
        bootstrap_servers=fake_cluster.bootstrap,
        group_id="billing",
        client_id="biller",
        auto_offset_reset="earliest",
    ) as consumer:
        async for record in consumer:
            # The record's process span is current while the loop's body runs.
            with recorded.tracer.start_as_current_span(f"handle {record.offset}"):
                pass
            if record.offset == 1:
                # The first record's span ended when the second was asked for.
                assert [s.name for s in recorded.spans("orders process")] == ["orders process"]
                break
    first, second = recorded.spans("orders process")  # the second ended with close()
    for process, send in ((first, first_send), (second, second_send)):
        assert process.kind is SpanKind.CONSUMER
        assert ids(process.parent) == ids(send.context)  # no span was current around the loop
        assert linked(process) == [ids(send.context)]
    assert recorded.span("handle 0").parent == first.get_span_context()
    assert recorded.span("handle 1").parent == second.get_span_context()
    assert dict(first.attributes or {}) == {
        "messaging.system": "kafka",
        "messaging.operation.name": "process",
        "messaging.operation.type": "process",
        "messaging.destination.name": "orders",
        "messaging.destination.partition.id": "0",
        "messaging.kafka.offset": 0,
        "messaging.kafka.message.key": "k-1",
        "messaging.consumer.group.name": "billing",
        "messaging.client.id": "biller",
        "server.address": "127.0.0.1",
        "server.port": first.attributes["server.port"],  # type: ignore[index]
    }
    assert second.attributes["messaging.kafka.message.tombstone"] is True  # type: ignore[index]
    # No receive span for the fetches that filled the iteration's buffer.
    assert [s.name for s in recorded.spans() if "receive" in s.name] == []
    # Closing in the iterating task made the context before the loop current again.
    assert trace.get_current_span() is trace.INVALID_SPAN


async def test_inside_an_application_span_a_process_span_is_its_child_linked_to_the_producer(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    fake_cluster.create_topic("orders")
    async with Producer(fake_cluster.bootstrap) as producer:
        await producer.send_and_wait("orders", b"order-1")
    async with Consumer(
        "orders", bootstrap_servers=fake_cluster.bootstrap, auto_offset_reset="earliest"
    ) as consumer:
        with recorded.tracer.start_as_current_span("request") as request:
            await anext(consumer)  # in this task: asyncio.wait_for would run it in another
            assert trace.get_current_span().name == "orders process"  # type: ignore[attr-defined]
            await consumer.close()
            assert trace.get_current_span() is request
    process = recorded.span("orders process")
    assert process.parent == request.get_span_context()
    assert linked(process) == [ids(recorded.span("orders send").context)]


async def test_a_getmany_that_returns_records_is_one_receive_span_linking_their_producers(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    fake_cluster.create_topic("orders")
    async with Producer(fake_cluster.bootstrap) as producer:
        for value in (b"a", b"b", b"c"):
            await producer.send(value=value, topic="orders")
        await producer.flush()
    sends = [ids(s.context) for s in recorded.spans("orders send")]
    async with Consumer(bootstrap_servers=fake_cluster.bootstrap, group_id="audit") as consumer:
        await getmany_from_start(consumer, TopicPartition("orders", 0), 3)
        assert await consumer.getmany(timeout_ms=0) == {}  # an empty poll makes no span
    receives = recorded.spans("orders receive")
    assert sum(s.attributes["messaging.batch.message_count"] for s in receives) == 3  # type: ignore[index, misc]
    assert [c for s in receives for c in linked(s)] == sends
    for span in receives:
        assert span.kind is SpanKind.CONSUMER
        assert span.parent is None
        assert span.attributes["messaging.destination.partition.id"] == "0"  # type: ignore[index]
        assert span.attributes["messaging.consumer.group.name"] == "audit"  # type: ignore[index]
    assert recorded.spans("orders process") == []


async def test_a_receive_of_several_topics_names_none(recorded: Recorded) -> None:
    async with FakeCluster(num_brokers=1) as cluster:  # one broker: one fetch, both partitions
        cluster.create_topic("a")
        cluster.create_topic("b")
        cluster.produce("a", 0, [b"1"])
        cluster.produce("b", 0, [b"2"])
        async with Consumer(
            "a", "b", bootstrap_servers=cluster.bootstrap, auto_offset_reset="earliest"
        ) as consumer:
            # Fetching starts once both partitions have their positions.
            tps = [TopicPartition("a", 0), TopicPartition("b", 0)]
            consumer.pause(*tps)
            for tp in tps:
                await consumer.position(tp)
            consumer.resume(*tps)
            batches = await asyncio.wait_for(consumer.getmany(timeout_ms=5000), 10)
    assert sorted(batches) == tps
    span = recorded.span("receive")
    assert "messaging.destination.name" not in span.attributes  # type: ignore[operator]
    assert "messaging.destination.partition.id" not in span.attributes  # type: ignore[operator]
    assert span.attributes["messaging.batch.message_count"] == 2  # type: ignore[index]
    assert span.links == ()  # records no traced producer wrote link to nothing


async def test_the_application_s_headers_stay_as_given_and_its_own_context_wins(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    fake_cluster.create_topic("orders")
    given: list[Any] = [("a", b"1"), Header("b", None)]
    own = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    async with Producer(fake_cluster.bootstrap) as producer:
        await producer.send_and_wait("orders", b"1", headers=given)
        await producer.send_and_wait("orders", b"2", headers=(("traceparent", own),))
    assert given == [("a", b"1"), Header("b", None)]  # the caller's list is not changed
    first, second = recorded.spans("orders send")
    records = fake_cluster.records("orders", 0)
    assert records[0].headers == (
        Header("a", b"1"),
        Header("b", None),
        Header("traceparent", traceparent(first)),
    )
    assert records[1].headers == (Header("traceparent", own),)
    assert linked(second) == [(0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331)]


async def test_a_send_that_raises_ends_its_span_with_the_error(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    fake_cluster.create_topic("orders")
    async with Producer(fake_cluster.bootstrap) as producer:
        with pytest.raises(InvalidPartitionError, match="partition 7 does not exist"):
            await producer.send("orders", b"v", partition=7)
    span = recorded.span("orders send")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "InvalidPartitionError"  # type: ignore[index]
    assert span.attributes["messaging.destination.partition.id"] == "7"  # type: ignore[index]
    kind, message = recorded_exception(span)
    assert (kind.rpartition(".")[2], "partition 7 does not exist" in message) == (
        "InvalidPartitionError",
        True,
    )


async def test_a_delivery_that_fails_ends_its_span_with_the_error(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    fake_cluster.create_topic("small", configs={"max.message.bytes": "200"})
    async with Producer(fake_cluster.bootstrap) as producer:
        delivery = await producer.send("small", b"x" * 500)
        with pytest.raises(MessageTooLargeError):
            await delivery
    span = recorded.span("small send")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "MessageTooLargeError"  # type: ignore[index]
    assert recorded_exception(span)[0].rpartition(".")[2] == "MessageTooLargeError"


async def test_a_getmany_that_raises_is_a_receive_span_with_the_error(
    fake_cluster: FakeCluster, recorded: Recorded
) -> None:
    consumer = Consumer(bootstrap_servers=fake_cluster.bootstrap)
    with pytest.raises(ConsumerStateError, match="not started"):
        await consumer.getmany()
    span = recorded.span("receive")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "ConsumerStateError"  # type: ignore[index]
