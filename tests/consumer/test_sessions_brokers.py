"""Fetch sessions and leader epochs against the embedded brokers (or KAFKAWIRE_BOOTSTRAP).

Neither embedded broker keeps fetch sessions: both answer session id 0 to a full fetch that
asks for one, so every fetch there stays full. A broker that opens a session (Apache Kafka,
through KAFKAWIRE_BOOTSTRAP) is sent incremental fetches here and by the consumer. Nor does
either validate positions: Tansu lacks OffsetForLeaderEpoch, and the mock cluster serves it
only up to v2, below the v3 a consumer needs (as in Kafka's Java client); the fake brokers of
``test_fetcher_leader_epochs`` show validation.
"""

from __future__ import annotations

import pytest

from kafkawire.client import KafkaClient
from kafkawire.consumer import Consumer, TopicPartition
from kafkawire.consumer.fetching.fetch_session import FetchSession
from kafkawire.operations.fetch_request import (
    FetchOptions,
    PartitionFetch,
    answered,
    fetch_request,
    fetch_version,
)
from kafkawire.testing.pytest_plugin import FAKE_BROKER_NAME, Broker, external_bootstrap

from .helpers import fresh_topic, produce, read

pytestmark = pytest.mark.asyncio(loop_scope="session")

OPTIONS = FetchOptions(max_wait_ms=10, min_bytes=1, max_bytes=1 << 20, isolation_level=0)


async def session_fetch(
    client: KafkaClient, session: FetchSession, wanted: dict[TopicPartition, PartitionFetch]
) -> tuple[int, dict[TopicPartition, int]]:
    """One Fetch in ``session``: the session id answered and the partitions named (with the
    number of record bytes each brought)."""
    version, ids = await fetch_version(client.cluster, session.node_id, {tp.topic for tp in wanted})
    sent = session.build(wanted, ids, version)
    plan = fetch_request(
        version,
        sent.topic_ids,
        sent.to_send,
        OPTIONS,
        session_id=sent.session_id,
        session_epoch=sent.epoch,
        forgotten=sent.to_forget,
    )
    response = await client.cluster.send(plan.request, node_id=session.node_id, retry=False)
    assert response.error_code == 0
    parts = {
        TopicPartition(topic, data.partition_index): len(data.records or b"")
        for topic, data in answered(response, sent.names)
    }
    assert session.answered(sent, response.session_id, parts) is None
    return response.session_id, parts


async def test_whether_the_broker_keeps_fetch_sessions(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker, partitions=4)
    await produce(kafka_broker, topic, [b"a", b"b"], 0)
    async with KafkaClient(kafka_broker.bootstrap) as client:
        metadata = await client.cluster.metadata([topic])
        leader = metadata.leader_for(topic, 0)
        tps = [
            TopicPartition(topic, p) for p in range(4) if metadata.leader_for(topic, p) == leader
        ]
        session = FetchSession(leader)
        wanted = {tp: PartitionFetch(0, metadata.leader_epoch(*tp), 1 << 20) for tp in tps}
        session_id, first = await session_fetch(client, session, wanted)
        assert set(first) == set(tps)  # a full answer names every partition
        assert first[tps[0]] > 0
        if external_bootstrap() is None and kafka_broker.name != FAKE_BROKER_NAME:
            assert session_id == 0  # neither embedded broker keeps sessions (the fake does)
            return
        if session_id == 0:
            pytest.skip("this broker keeps no fetch sessions (or has no room for one now)")
        wanted[tps[0]] = PartitionFetch(2, wanted[tps[0]].current_leader_epoch, 1 << 20)
        same, second = await session_fetch(client, session, wanted)
        assert same == session_id
        assert second == {}  # nothing new: an incremental answer names no partition
        await produce(kafka_broker, topic, [b"c"], 0)
        _, third = await session_fetch(client, session, wanted)
        assert set(third) == {tps[0]}


async def test_records_read_back_exactly_over_many_fetches(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker, partitions=4)
    written = {p: [b"%d-%d" % (p, i) for i in range(40)] for p in (0, 2)}
    for p, values in written.items():
        await produce(kafka_broker, topic, values, p)
    async with Consumer(
        topic,
        bootstrap_servers=kafka_broker.bootstrap,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=200,  # a batch or so per fetch: many fetches
    ) as consumer:
        got = await read(consumer, 80)
    by_partition: dict[int, list[bytes]] = {}
    for r in got:
        by_partition.setdefault(r.partition, []).append(r.value)
    assert by_partition == written


async def test_commits_carry_the_leader_epoch_and_resume_from_it(kafka_broker: Broker) -> None:
    topic = await fresh_topic(kafka_broker)
    await produce(kafka_broker, topic, [b"%d" % i for i in range(6)])
    tp = TopicPartition(topic, 0)
    group = f"epochs-{topic}"
    async with Consumer(
        bootstrap_servers=kafka_broker.bootstrap, group_id=group, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        first = []
        while len(first) < 3:
            first += (await consumer.getmany(timeout_ms=200, max_records=3 - len(first))).get(
                tp, []
            )
        await consumer.commit()
        committed = await consumer.committed(tp)
    assert committed is not None
    assert (committed.offset, committed.leader_epoch) == (3, first[-1].leader_epoch)
    async with Consumer(bootstrap_servers=kafka_broker.bootstrap, group_id=group) as consumer:
        consumer.assign([tp])  # from the commit, validated where the broker can
        rest = await read(consumer, 3)
    assert [r.value for r in rest] == [b"3", b"4", b"5"]
