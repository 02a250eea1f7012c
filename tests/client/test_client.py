"""The client's fetch convenience against a scripted broker: what it returns, and what it drops."""

from __future__ import annotations

from typing import Any

from kafkawire.client import KafkaClient
from kafkawire.messages import APIS
from kafkawire.messages.fetch import v6 as fetch_v6
from kafkawire.messages.metadata import v13 as metadata
from kafkawire.records import (
    ControlType,
    EndTransactionMarker,
    RecordBatchBuilder,
    end_transaction_batch,
)

PRODUCER = 7
MAX_VERSIONS = {1: 6}  # a broker whose Fetch stops at v6: no top-level error_code yet


def batch(base_offset: int, *values: bytes, transactional: bool = False) -> bytes:
    builder = RecordBatchBuilder(
        base_offset=base_offset,
        producer_id=PRODUCER if transactional else -1,
        producer_epoch=0 if transactional else -1,
        transactional=transactional,
    )
    for value in values:
        builder.append(None, value, timestamp=1)
    return builder.build()


def abort_marker(base_offset: int) -> bytes:
    marker = EndTransactionMarker(ControlType.ABORT, coordinator_epoch=0)
    return end_transaction_batch(
        marker, producer_id=PRODUCER, producer_epoch=0, timestamp=1, base_offset=base_offset
    )


# Offsets 0-1 committed-free plain records, 2-3 an aborted transaction, 4 its ABORT marker, 5 plain.
LOG = batch(0, b"a", b"b") + batch(2, b"x", b"y", transactional=True) + abort_marker(4)
LOG += batch(5, b"c")


class FakeBroker:
    """One broker, node 1, leading partition 0 of topic ``t``; answers Fetch from ``LOG``."""

    closed = False

    def version_for(self, api_key: int) -> int:
        return MAX_VERSIONS.get(api_key, APIS[api_key].versions[-1])

    async def send(self, request: Any, *, timeout: float | None = None) -> Any:
        if isinstance(request, metadata.MetadataRequest):
            broker = metadata.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=9001)
            partition = metadata.MetadataResponsePartition(partition_index=0, leader_id=1)
            topic = metadata.MetadataResponseTopic(name="t", partitions=(partition,))
            return metadata.MetadataResponse(brokers=(broker,), topics=(topic,))
        assert isinstance(request, fetch_v6.FetchRequest)
        committed_only = request.isolation_level == 1
        aborted = (fetch_v6.AbortedTransaction(producer_id=PRODUCER, first_offset=2),)
        data = fetch_v6.PartitionData(
            high_watermark=6,
            last_stable_offset=6,
            aborted_transactions=aborted if committed_only else None,
            records=LOG,
        )
        topic_data = fetch_v6.FetchableTopicResponse(topic="t", partitions=(data,))
        return fetch_v6.FetchResponse(responses=(topic_data,))

    async def close(self) -> None:
        self.closed = True


def client() -> KafkaClient:
    async def connect(host: str, port: int) -> Any:
        return FakeBroker()

    return KafkaClient("127.0.0.1:9001", connect=connect, retry_backoff_ms=1)


async def test_read_uncommitted_returns_aborted_records_but_never_control_records() -> None:
    async with client() as kafka:
        result = await kafka.fetch("t", 0, 1)
    assert [(r.offset, r.value) for r in result.records] == [
        (1, b"b"),  # offset 0 is before the fetch offset: dropped from its batch
        (2, b"x"),
        (3, b"y"),
        (5, b"c"),
    ]
    assert (result.next_offset, result.high_watermark, result.last_stable_offset) == (6, 6, 6)


async def test_read_committed_drops_the_records_of_aborted_transactions() -> None:
    async with client() as kafka:
        result = await kafka.fetch("t", 0, 0, isolation_level=1)
        paged = [
            r.value async for r in kafka.records("t", 0, 0, stop_at_end=True, isolation_level=1)
        ]
    assert [(r.offset, r.value) for r in result.records] == [(0, b"a"), (1, b"b"), (5, b"c")]
    assert result.next_offset == 6
    assert paged == [b"a", b"b", b"c"]


def test_fetch_results_carry_each_records_timestamp_type() -> None:
    from types import SimpleNamespace

    from kafkawire.client.client import _fetch_result
    from kafkawire.records import TimestampType

    appended = RecordBatchBuilder(base_offset=2, log_append_time=1_700_000_000_000)
    appended.append(None, b"c", timestamp=1)
    data = SimpleNamespace(records=batch(0, b"a", b"b") + appended.build(), high_watermark=3)
    result = _fetch_result(data, 1)  # from inside the first batch
    assert [r.offset for r in result.records] == [1, 2]
    assert result.timestamp_types == (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME)
    assert result.records[1].timestamp == 1_700_000_000_000
