"""The low-level client's conveniences against Tansu and librdkafka's mock cluster."""

from __future__ import annotations

import pytest

from kafkawire.client import EARLIEST, LATEST, KafkaClient
from kafkawire.errors import OffsetOutOfRangeError, ProtocolError
from kafkawire.records import Compression
from kafkawire.testing import fresh_topic
from kafkawire.testing.pytest_plugin import Broker, kafka_brokers, tansu_bug

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.mark.parametrize("compression", [Compression.NONE, Compression.LZ4, Compression.ZSTD])
async def test_produce_then_fetch_round_trips(
    kafka_broker: Broker, compression: Compression
) -> None:
    async with KafkaClient(kafka_broker.bootstrap) as client:
        topic = await fresh_topic(kafka_broker)
        first = await client.produce(topic, 0, [b"a", None, (b"k", b"c")], compression=compression)
        result = await client.fetch(topic, 0, first, max_wait_ms=100)
    assert [(r.offset, r.key, r.value) for r in result.records] == [
        (first, None, b"a"),
        (first + 1, None, None),
        (first + 2, b"k", b"c"),
    ]
    assert result.next_offset == first + 3
    assert result.high_watermark == first + 3


async def test_records_pages_through_several_fetches_and_stops_at_the_end(
    kafka_broker: Broker,
) -> None:
    async with KafkaClient(kafka_broker.bootstrap) as client:
        topic = await fresh_topic(kafka_broker)
        for batch in ([b"1", b"2"], [b"3"], [b"4", b"5"]):
            await client.produce(topic, 0, batch)
        # partition_max_bytes=1: each fetch returns one batch, so paging must follow next_offset.
        seen = [
            r.value
            async for r in client.records(
                topic, 0, 0, stop_at_end=True, max_wait_ms=50, partition_max_bytes=1
            )
        ]
        from_middle = [
            r.value async for r in client.records(topic, 0, 3, stop_at_end=True, max_wait_ms=50)
        ]
    assert seen == [b"1", b"2", b"3", b"4", b"5"]
    assert from_middle == [b"4", b"5"]


@kafka_brokers(
    tansu=tansu_bug(
        "Fetch past the log end answers no error, not OFFSET_OUT_OF_RANGE",
        raises=pytest.fail.Exception,
    )
)
async def test_fetching_past_the_end_is_out_of_range(kafka_broker: Broker) -> None:
    async with KafkaClient(kafka_broker.bootstrap, default_api_timeout_ms=1000) as client:
        topic = await fresh_topic(kafka_broker)
        await client.produce(topic, 0, [b"x"])
        with pytest.raises(OffsetOutOfRangeError):
            await client.fetch(topic, 0, 50, max_wait_ms=50)


@kafka_brokers(
    tansu=tansu_bug("Fetch with max_wait_ms=0 answers no partitions at all", raises=ProtocolError)
)
async def test_a_fetch_that_does_not_wait_still_answers_its_partition(
    kafka_broker: Broker,
) -> None:
    async with KafkaClient(kafka_broker.bootstrap) as client:
        topic = await fresh_topic(kafka_broker)
        await client.produce(topic, 0, [b"x"])
        assert [r.value for r in (await client.fetch(topic, 0, 0, max_wait_ms=0)).records] == [b"x"]


async def test_earliest_offset(kafka_broker: Broker) -> None:
    async with KafkaClient(kafka_broker.bootstrap) as client:
        topic = await fresh_topic(kafka_broker)
        await client.produce(topic, 0, [b"x", b"y"])
        assert (await client.list_offsets(topic, 0, EARLIEST)).offset == 0


@kafka_brokers(tansu=tansu_bug("ListOffsets latest answers the last batch's base offset + 1"))
async def test_latest_offset_is_the_end_of_the_log(kafka_broker: Broker) -> None:
    async with KafkaClient(kafka_broker.bootstrap) as client:
        topic = await fresh_topic(kafka_broker)
        await client.produce(topic, 0, [b"x", b"y", b"z"])
        assert (await client.list_offsets(topic, 0, LATEST)).offset == 3


async def test_acks_zero_waits_for_nothing(kafka_broker: Broker) -> None:
    async with KafkaClient(kafka_broker.bootstrap) as client:
        topic = await fresh_topic(kafka_broker)
        assert await client.produce(topic, 0, [b"fire", b"forget"], acks=0) == -1
        await client.produce(topic, 0, [b"acked"])  # ordered after the acks=0 batch
        values = [r.value async for r in client.records(topic, 0, 0, stop_at_end=True)]
    assert values == [b"fire", b"forget", b"acked"]
