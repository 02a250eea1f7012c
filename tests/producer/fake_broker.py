"""One fake broker (node 1, loopback) that serves what a producer asks, with hooks to script
faults: Metadata (its topics, their errors, a delay), InitProducerId (answers, a delay),
Produce (an error code per batch, a delay, or silence), and the transaction APIs
(FindCoordinator, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit with a group
generation to check, EndTxn).

``async with ProducerBroker() as broker:`` then ``Producer(broker.bootstrap, ...)``. What
it was sent is in ``broker.requests(api_key)``; the values it wrote, per partition, in
``broker.written``.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from kafkawire.records import RecordBatch, decode_batches
from tests.net.fakebroker import FakeBroker, FakeClient, messages

PRODUCE, METADATA, FIND_COORDINATOR, INIT_PRODUCER_ID = 0, 3, 10, 22
ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = 24, 25, 26, 28

ProduceScript = Callable[[str, int, RecordBatch], int]
"""(topic, partition, batch) -> the error code to answer (0: write it)."""
InitScript = Callable[[Any], tuple[int, int, int]]
"""InitProducerId request -> (error code, producer id, epoch)."""


class ProducerBroker:
    def __init__(self, *, topics: dict[str, int] | None = None) -> None:
        self.topics = {"t": 3} if topics is None else topics  # name -> partition count
        self.topic_errors: dict[str, int] = {}  # a topic's error code in Metadata answers
        self.metadata_delay = 0.0
        self.produce_error: ProduceScript = lambda topic, partition, batch: 0
        self.produce_delay = 0.0
        self.answers_produce = True
        self.init_producer_id: InitScript = self._next_producer_id
        self.init_delay = 0.0
        self.generation: tuple[int, str] | None = None  # the group's (generation, member id)
        self.written: dict[tuple[str, int], list[bytes | None]] = defaultdict(list)
        self._ids = iter(range(7, 1000))
        self._broker = FakeBroker(self._handle)

    async def __aenter__(self) -> ProducerBroker:
        await self._broker.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._broker.__aexit__(*exc)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self._broker.port}"

    def requests(self, api_key: int) -> list[Any]:
        """The requests of ``api_key`` the broker was sent, over all connections."""
        return [
            body
            for client in self._broker.clients
            for header, body in client.requests
            if header.request_api_key == api_key
        ]

    def cut(self) -> None:
        """Close every connection to the broker."""
        for client in self._broker.clients:
            client.abort()

    def _next_producer_id(self, request: Any) -> tuple[int, int, int]:
        return 0, next(self._ids), 0

    async def _handle(self, client: FakeClient, header: Any, request: Any) -> Any:
        key, version = header.request_api_key, header.request_api_version
        m = messages(key, version)
        if key == METADATA:
            await asyncio.sleep(self.metadata_delay)
            return self._metadata(m, request)
        if key == PRODUCE:
            return await self._produce(m, request)
        if key == INIT_PRODUCER_ID:
            await asyncio.sleep(self.init_delay)
            code, producer_id, epoch = self.init_producer_id(request)
            return m.InitProducerIdResponse(
                error_code=code, producer_id=producer_id, producer_epoch=epoch
            )
        if key == FIND_COORDINATOR:
            return m.FindCoordinatorResponse(
                coordinators=(m.Coordinator(key=request.coordinator_keys[0], node_id=1),)
            )
        if key == ADD_PARTITIONS:
            return m.AddPartitionsToTxnResponse(
                results_by_topic_v3_and_below=tuple(
                    m.AddPartitionsToTxnTopicResult(
                        name=t.name,
                        results_by_partition=tuple(
                            m.AddPartitionsToTxnPartitionResult(partition_index=p)
                            for p in t.partitions
                        ),
                    )
                    for t in request.v3_and_below_topics
                )
            )
        if key in (ADD_OFFSETS, END_TXN):
            return m.AddOffsetsToTxnResponse() if key == ADD_OFFSETS else m.EndTxnResponse()
        if key == TXN_OFFSET_COMMIT:
            return self._txn_offset_commit(m, request)
        return None

    def _metadata(self, m: Any, request: Any) -> Any:
        names = list(self.topics) if request.topics is None else [t.name for t in request.topics]
        topics = []
        for name in names:
            count = self.topics.get(name, 0)
            code = self.topic_errors.get(name, 0 if count else 3)
            partitions = tuple(
                m.MetadataResponsePartition(partition_index=p, leader_id=1) for p in range(count)
            )
            topics.append(
                m.MetadataResponseTopic(error_code=code, name=name, partitions=partitions)
            )
        return m.MetadataResponse(
            brokers=(
                m.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=self._broker.port),
            ),
            topics=tuple(topics),
        )

    async def _produce(self, m: Any, request: Any) -> Any:
        await asyncio.sleep(self.produce_delay)
        if not self.answers_produce:
            return None
        topics = []
        for t in request.topic_data:
            answers = []
            for p in t.partition_data:
                batch = next(iter(decode_batches(p.records)))
                assert isinstance(batch, RecordBatch)
                code = self.produce_error(t.name, p.index, batch)
                log = self.written[(t.name, p.index)]
                offset = len(log)
                if code == 0:
                    log.extend(r.value for r in batch.records)
                answers.append(
                    m.PartitionProduceResponse(
                        index=p.index, error_code=code, base_offset=offset if code == 0 else -1
                    )
                )
            topics.append(m.TopicProduceResponse(name=t.name, partition_responses=tuple(answers)))
        return m.ProduceResponse(responses=tuple(topics))

    def _txn_offset_commit(self, m: Any, request: Any) -> Any:
        code = 0
        if self.generation is not None:
            generation, member_id = self.generation
            if request.member_id != member_id:
                code = 25  # UNKNOWN_MEMBER_ID
            elif request.generation_id != generation:
                code = 22  # ILLEGAL_GENERATION
        return m.TxnOffsetCommitResponse(
            topics=tuple(
                m.TxnOffsetCommitResponseTopic(
                    name=t.name,
                    partitions=tuple(
                        m.TxnOffsetCommitResponsePartition(
                            partition_index=p.partition_index, error_code=code
                        )
                        for p in t.partitions
                    ),
                )
                for t in request.topics
            )
        )
