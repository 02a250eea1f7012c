"""The records layer meets the generated Produce and Fetch messages without a second copy."""

from __future__ import annotations

from kafkawire.messages.fetch import v4 as fetch_v4
from kafkawire.messages.produce import v3 as produce_v3
from kafkawire.protocol import decode, encode
from kafkawire.records import (
    AbortedTransaction,
    Compression,
    LegacyBatchBuilder,
    RecordBatchBuilder,
    decode_batches,
    read_committed,
)


def _records() -> bytes:
    legacy = LegacyBatchBuilder(1, compression=Compression.SNAPPY, base_offset=0)
    legacy.append(None, b"old", timestamp=1)
    current = RecordBatchBuilder(compression=Compression.LZ4, base_offset=1)
    current.append(b"k", b"new", timestamp=2, headers=[("h", b"x")])
    return legacy.build() + current.build()


def test_fetch_response_records_decode_in_place() -> None:
    partition = fetch_v4.PartitionData(
        partition_index=0,
        high_watermark=2,
        aborted_transactions=(),
        records=_records()[:-3],  # cut inside the last batch, as a broker's fetch size does
    )
    topic = fetch_v4.FetchableTopicResponse(topic="t", partitions=(partition,))
    frame = encode(fetch_v4.FetchResponse(responses=(topic,)))
    decoded = decode(fetch_v4.FetchResponse, frame).responses[0].partitions[0]
    assert isinstance(decoded.records, memoryview)  # a slice of the frame, not a copy
    batches = list(decode_batches(decoded.records))
    assert [r.value for b in batches for r in b.records] == [b"old"]
    visible = read_committed(decode_batches(decoded.records), decoded.aborted_transactions)
    assert [b.magic for b in visible] == [1]


def test_fetch_response_with_aborted_transactions_filters_them() -> None:
    aborted = RecordBatchBuilder(producer_id=5, producer_epoch=0, transactional=True)
    aborted.append(None, b"gone", timestamp=0)
    records = aborted.build()
    partition = fetch_v4.PartitionData(
        aborted_transactions=(fetch_v4.AbortedTransaction(producer_id=5, first_offset=0),),
        records=records,
    )
    topic = fetch_v4.FetchableTopicResponse(topic="t", partitions=(partition,))
    frame = encode(fetch_v4.FetchResponse(responses=(topic,)))
    decoded = decode(fetch_v4.FetchResponse, frame).responses[0].partitions[0]
    assert decoded.records is not None
    assert list(read_committed(decode_batches(decoded.records), decoded.aborted_transactions)) == []
    assert list(read_committed(decode_batches(records), [AbortedTransaction(6, 0)])) != []


def test_produce_request_carries_built_batches_as_they_are() -> None:
    records = _records()
    partition = produce_v3.PartitionProduceData(index=0, records=records)
    topic = produce_v3.TopicProduceData(name="t", partition_data=(partition,))
    request = produce_v3.ProduceRequest(acks=-1, timeout_ms=1000, topic_data=(topic,))
    decoded = decode(produce_v3.ProduceRequest, encode(request))
    assert bytes(decoded.topic_data[0].partition_data[0].records or b"") == records
