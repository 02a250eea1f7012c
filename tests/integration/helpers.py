"""Raw protocol steps the broker tests share: produce a batch, find a leader, list offsets."""

from __future__ import annotations

import time

from kafkawire.errors import raise_for_code
from kafkawire.messages.list_offsets import v7 as list_offsets_v7
from kafkawire.messages.metadata import v8 as metadata_v8
from kafkawire.messages.produce import v9 as produce_v9
from kafkawire.records import RecordBatchBuilder
from kafkawire.testing import Address, parse_bootstrap, send_request

LATEST = -1  # ListOffsets timestamp meaning "the offset the next record will get"


def record_batch(values: list[bytes], timestamp: int | None = None) -> bytes:
    """An uncompressed v2 batch of key-less records, each at ``timestamp`` (default: now)."""
    builder = RecordBatchBuilder()
    at = int(time.time() * 1000) if timestamp is None else timestamp
    for value in values:
        builder.append(None, value, timestamp=at)
    return builder.build()


async def partition_leader(bootstrap: str, topic: str, partition: int) -> Address:
    """The address of the partition's leader (asking for the topic auto-creates it).

    Metadata v8, the last version before flexible encoding: the mock cluster's flexible
    Metadata responses carry a stray byte (see ``test_brokers``).
    """
    request = metadata_v8.MetadataRequest(topics=(metadata_v8.MetadataRequestTopic(name=topic),))
    metadata = await send_request(parse_bootstrap(bootstrap)[0], request)
    (found,) = metadata.topics
    raise_for_code(found.error_code)
    leader = next(p.leader_id for p in found.partitions if p.partition_index == partition)
    broker = next(b for b in metadata.brokers if b.node_id == leader)
    return parse_bootstrap(f"{broker.host}:{broker.port}")[0]


async def produce(
    leader: Address, topic: str, partition: int, values: list[bytes], timestamp: int | None = None
) -> int:
    """Produce ``values`` as one batch with acks=all; return the batch's base offset."""
    request = produce_v9.ProduceRequest(
        acks=-1,
        timeout_ms=5000,
        topic_data=(
            produce_v9.TopicProduceData(
                name=topic,
                partition_data=(
                    produce_v9.PartitionProduceData(
                        index=partition, records=record_batch(values, timestamp)
                    ),
                ),
            ),
        ),
    )
    response = await send_request(leader, request)
    (answer,) = response.responses[0].partition_responses
    raise_for_code(answer.error_code, answer.error_message)
    base_offset: int = answer.base_offset
    return base_offset


async def list_offset(leader: Address, topic: str, partition: int, timestamp: int) -> int:
    """ListOffsets v7 for one partition: the offset for ``timestamp`` (``LATEST``: the end)."""
    request = list_offsets_v7.ListOffsetsRequest(
        replica_id=-1,
        topics=(
            list_offsets_v7.ListOffsetsTopic(
                name=topic,
                partitions=(
                    list_offsets_v7.ListOffsetsPartition(
                        partition_index=partition, timestamp=timestamp
                    ),
                ),
            ),
        ),
    )
    response = await send_request(leader, request)
    (answer,) = response.topics[0].partitions
    raise_for_code(answer.error_code)
    offset: int = answer.offset
    return offset
