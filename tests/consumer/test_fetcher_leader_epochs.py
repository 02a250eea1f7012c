"""Leader epochs in the fetcher, on a fake leader speaking real bytes: the epoch sent with each
Fetch and ListOffsets, fenced and unknown epochs, and the position checked against the
leader's log after a leader change (KIP-320), by OffsetForLeaderEpoch or a diverging epoch."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kafkawire.consumer import Consumer, ConsumerRecord, LogTruncationError, TopicPartition
from kafkawire.records import RecordBatchBuilder
from tests.cluster.hostile import FakeCluster
from tests.net.fakebroker import FakeClient, messages

T0 = TopicPartition("t", 0)
FETCH, LIST_OFFSETS, OFFSET_FOR_LEADER_EPOCH = 1, 2, 23
FAST = {"retry_backoff_ms": 1, "fetch_max_wait_ms": 20}


@dataclass
class Entry:
    value: bytes
    epoch: int


@dataclass
class EpochLeader:
    """Leads ``t/0``: fences a Fetch or ListOffsets whose leader epoch is older than
    ``epoch`` (FENCED_LEADER_EPOCH) or newer (UNKNOWN_LEADER_EPOCH), answers one record per
    Fetch, stamped with the epoch it was written in, and OffsetForLeaderEpoch from its log."""

    epoch: int
    log: list[Entry] = field(default_factory=list)
    diverging: tuple[int, int] | None = None  # (epoch, end offset) for the next Fetch
    seen: dict[int, list[Any]] = field(default_factory=dict)  # api key -> requests
    asked: asyncio.Event = field(default_factory=asyncio.Event)  # an OffsetForLeaderEpoch came

    def write(self, count: int, prefix: bytes = b"") -> None:
        for _ in range(count):
            self.log.append(Entry(prefix + b"%d" % len(self.log), self.epoch))

    def truncate(self, length: int) -> None:
        del self.log[length:]

    def _check(self, current_leader_epoch: int) -> int:
        if current_leader_epoch < 0 or current_leader_epoch == self.epoch:
            return 0
        return 74 if current_leader_epoch < self.epoch else 75

    async def __call__(self, node: int, client: FakeClient, header: Any, request: Any) -> Any:
        self.seen.setdefault(header.request_api_key, []).append(request)
        module = messages(header.request_api_key, header.request_api_version)
        if header.request_api_key == FETCH:
            return await self._fetch(module, request)
        if header.request_api_key == OFFSET_FOR_LEADER_EPOCH:
            self.asked.set()
            return self._epoch_end(module, request)
        if header.request_api_key == LIST_OFFSETS:
            wanted = request.topics[0].partitions[0]
            answer = module.ListOffsetsPartitionResponse(
                partition_index=0,
                error_code=self._check(wanted.current_leader_epoch),
                offset=0,
                leader_epoch=self.epoch,
            )
            topic = module.ListOffsetsTopicResponse(name="t", partitions=(answer,))
            return module.ListOffsetsResponse(topics=(topic,))
        return None

    async def _fetch(self, module: Any, request: Any) -> Any:
        wanted = request.topics[0].partitions[0]
        offset = wanted.fetch_offset
        extra: dict[str, Any] = {}
        error = self._check(wanted.current_leader_epoch)
        records = None
        if not error and self.diverging is not None:
            epoch, end = self.diverging
            extra["diverging_epoch"] = module.EpochEndOffset(epoch=epoch, end_offset=end)
            self.diverging = None
        elif not error and offset < len(self.log):
            entry = self.log[offset]
            builder = RecordBatchBuilder(base_offset=offset, partition_leader_epoch=entry.epoch)
            builder.append(None, entry.value, timestamp=1)
            records = builder.build()
        else:
            await asyncio.sleep(0.01)  # a short long poll
        data = module.PartitionData(
            partition_index=0,
            error_code=error,
            high_watermark=len(self.log),
            records=records,
            **extra,
        )
        topic = module.FetchableTopicResponse(topic="t", partitions=(data,))
        return module.FetchResponse(responses=(topic,))

    def _epoch_end(self, module: Any, request: Any) -> Any:
        wanted = request.topics[0].partitions[0]
        error = self._check(wanted.current_leader_epoch)
        older = [i for i, e in enumerate(self.log) if e.epoch <= wanted.leader_epoch]
        found = max((self.log[i].epoch for i in older), default=-1)
        # the end of the largest epoch at or below the one asked: the first offset after it
        end = next((i for i, e in enumerate(self.log) if e.epoch > found), len(self.log))
        answer = module.EpochEndOffset(
            error_code=error,
            partition=0,
            leader_epoch=found if older else -1,
            end_offset=end if older else -1,
        )
        return module.OffsetForLeaderEpochResponse(
            topics=(module.OffsetForLeaderTopicResult(topic="t", partitions=(answer,)),)
        )


async def take(consumer: Consumer, count: int) -> list[ConsumerRecord]:
    """Exactly ``count`` more records of T0 (fails after 10 s)."""
    got: list[ConsumerRecord] = []

    async def collect() -> None:
        while len(got) < count:
            batch = await consumer.getmany(timeout_ms=200, max_records=count - len(got))
            got.extend(batch.get(T0, []))

    await asyncio.wait_for(collect(), 10)
    return got


async def test_a_fenced_leader_epoch_refreshes_the_metadata() -> None:
    leader = EpochLeader(epoch=5)
    leader.write(2)
    async with FakeCluster(1, leader, leader_epoch=3) as brokers:

        async def fenced(node: int, client: FakeClient, header: Any, request: Any) -> Any:
            brokers.leader_epoch = leader.epoch  # the metadata has caught up by the next ask
            return await leader(node, client, header, request)

        brokers.handler = fenced
        async with Consumer(bootstrap_servers=brokers.bootstrap, **FAST) as consumer:
            consumer.assign([T0])
            consumer.seek(T0, 0)
            got = await take(consumer, 2)
        metadata_requests = len(brokers.requests(1, 3))
    assert [r.value for r in got] == [b"0", b"1"]
    sent = [r.topics[0].partitions[0].current_leader_epoch for r in leader.seen[FETCH]]
    assert sent[0] == 3  # what the metadata said: the broker fenced it
    assert set(sent[1:]) == {5}
    assert metadata_requests >= 2


async def test_an_unknown_leader_epoch_is_retried_until_the_broker_catches_up() -> None:
    leader = EpochLeader(epoch=5)
    leader.write(2)
    refusals = 0

    async def behind(node: int, client: FakeClient, header: Any, request: Any) -> Any:
        nonlocal refusals
        if header.request_api_key == FETCH and refusals < 3:
            refusals += 1  # three answers of UNKNOWN_LEADER_EPOCH (7 > 5), then caught up
        else:
            leader.epoch = 7
        return await leader(node, client, header, request)

    async with (
        FakeCluster(1, behind, leader_epoch=7) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, **FAST) as consumer,
    ):
        consumer.assign([T0])
        consumer.seek(T0, 0)
        got = await take(consumer, 2)
    assert [r.value for r in got] == [b"0", b"1"]
    assert [r.leader_epoch for r in got] == [5, 5]
    assert refusals == 3


async def test_list_offsets_carries_the_leader_epoch() -> None:
    leader = EpochLeader(epoch=8)
    async with FakeCluster(1, leader, leader_epoch=6) as brokers:

        async def fenced(node: int, client: FakeClient, header: Any, request: Any) -> Any:
            brokers.leader_epoch = leader.epoch
            return await leader(node, client, header, request)

        brokers.handler = fenced
        async with Consumer(bootstrap_servers=brokers.bootstrap, **FAST) as consumer:
            assert await consumer.beginning_offsets([T0]) == {T0: 0}
    sent = [r.topics[0].partitions[0].current_leader_epoch for r in leader.seen[LIST_OFFSETS]]
    assert sent == [6, 8]


@contextlib.asynccontextmanager
async def three_read_at_epoch_3(
    policy: Any,
) -> AsyncIterator[tuple[EpochLeader, FakeCluster, Consumer]]:
    """A consumer (``auto_offset_reset=policy``) that has read the 3 records written at
    leader epoch 3, its leader and the cluster."""
    leader = EpochLeader(epoch=3)
    leader.write(3)
    async with (
        FakeCluster(1, leader, leader_epoch=3) as brokers,
        Consumer(bootstrap_servers=brokers.bootstrap, auto_offset_reset=policy, **FAST) as consumer,
    ):
        consumer.assign([T0])
        consumer.seek(T0, 0)
        first = await take(consumer, 3)
        assert [r.leader_epoch for r in first] == [3, 3, 3]
        yield leader, brokers, consumer


def change_leader(leader: EpochLeader, brokers: FakeCluster) -> None:
    """Leadership moves to epoch 4: the next Fetch (at epoch 3) is fenced."""
    leader.epoch = brokers.leader_epoch = 4


@pytest.mark.parametrize("policy", ["earliest", "none"])
async def test_a_position_is_validated_after_a_leader_change(policy: Any) -> None:
    async with three_read_at_epoch_3(policy) as (leader, brokers, consumer):
        change_leader(leader, brokers)
        leader.write(2, b"new")  # the new leader kept all three and writes on
        got = await take(consumer, 2)
    assert [(r.offset, r.value, r.leader_epoch) for r in got] == [(3, b"new3", 4), (4, b"new4", 4)]
    [asked] = leader.seen[OFFSET_FOR_LEADER_EPOCH]
    wanted = asked.topics[0].partitions[0]
    assert (wanted.leader_epoch, wanted.current_leader_epoch) == (3, 4)
    assert asked.replica_id == -1


async def test_a_truncated_log_moves_the_position_back_to_where_it_parts() -> None:
    async with three_read_at_epoch_3("latest") as (leader, brokers, consumer):
        change_leader(leader, brokers)
        leader.truncate(1)  # the new leader has only offset 0 of epoch 3 ...
        leader.write(3, b"new")  # ... and writes offsets 1-3 anew
        got = await take(consumer, 3)
        position = await consumer.position(T0)
    assert [(r.offset, r.value) for r in got] == [(1, b"new1"), (2, b"new2"), (3, b"new3")]
    assert position == 4


async def test_a_truncated_log_without_a_reset_policy_is_an_error() -> None:
    async with three_read_at_epoch_3("none") as (leader, brokers, consumer):
        change_leader(leader, brokers)
        leader.truncate(1)
        leader.write(3, b"new")
        with pytest.raises(LogTruncationError, match="t/0 at offset 3") as raised:
            await take(consumer, 1)
        assert (raised.value.partition, raised.value.offset) == (T0, 3)
        assert raised.value.divergent_offset == 1
        consumer.seek(T0, 1)  # the application decides: read the new records
        got = await take(consumer, 3)
    assert [r.value for r in got] == [b"new1", b"new2", b"new3"]


@pytest.mark.parametrize("policy", ["earliest", "none"])
async def test_a_diverging_epoch_in_a_fetch_answer(policy: Any) -> None:
    async with three_read_at_epoch_3(policy) as (leader, _, consumer):
        leader.truncate(2)
        leader.write(2, b"new")
        leader.diverging = (3, 2)  # epoch 3 ends at offset 2 in the leader's log
        if policy == "none":
            with pytest.raises(LogTruncationError) as raised:
                await take(consumer, 1)
            assert raised.value.divergent_offset == 2
        else:
            got = await take(consumer, 2)
            assert [(r.offset, r.value) for r in got] == [(2, b"new2"), (3, b"new3")]
    assert OFFSET_FOR_LEADER_EPOCH not in leader.seen  # the Fetch answer said it all


async def test_validation_is_retried_after_a_lost_connection() -> None:
    async with three_read_at_epoch_3("earliest") as (leader, brokers, consumer):
        dropped = 0

        async def dropping(node: int, client: FakeClient, header: Any, request: Any) -> Any:
            nonlocal dropped
            if header.request_api_key == OFFSET_FOR_LEADER_EPOCH and not dropped:
                dropped += 1
                client.abort()
                return None
            return await leader(node, client, header, request)

        brokers.handler = dropping
        change_leader(leader, brokers)
        leader.write(2, b"new")
        got = await take(consumer, 2)
    assert [r.offset for r in got] == [3, 4]
    assert dropped == 1
    assert len(leader.seen[OFFSET_FOR_LEADER_EPOCH]) == 1  # the dropped one never reached it
