"""A transactional producer after a failure, on the fake cluster: the epoch is bumped once a
transaction whose sent batch failed is aborted, so the next transaction is not refused for the
gap the batch left (Java's ``epochBumpRequired``); and a commit or abort under way refuses
new records (Java's COMMITTING_TRANSACTION and ABORTING_TRANSACTION)."""

from __future__ import annotations

import asyncio

import pytest

from kafkawire.errors import MessageTooLargeError
from kafkawire.producer import Producer, TransactionStateError
from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.fake.faults import answer_partitions
from tests.net.fakebroker import WAIT


async def test_the_abort_after_a_lost_batch_bumps_the_epoch_and_the_next_transaction_commits(
    fake_cluster: FakeCluster,
) -> None:
    """The broker refuses the first batch (sequence 0), so it expects 0 again; the next
    batch was numbered after it. Without a bump, every later transaction on the partition
    fails with OUT_OF_ORDER_SEQUENCE_NUMBER."""
    fake_cluster.create_topic("t")
    fake_cluster.control(answer_partitions(10), api_key="Produce")  # MESSAGE_TOO_LARGE, once
    async with Producer(fake_cluster.bootstrap, transactional_id="tx", linger_ms=0) as producer:
        producer.begin_transaction()
        lost = await producer.send("t", b"lost", partition=0)
        with pytest.raises(MessageTooLargeError):
            await asyncio.wait_for(lost, WAIT)
        with pytest.raises(TransactionStateError, match="must be aborted"):
            await producer.commit_transaction()
        await asyncio.wait_for(producer.abort_transaction(), WAIT)
        async with asyncio.timeout(WAIT), producer.transaction():
            delivered = await producer.send_and_wait("t", b"next", partition=0)
    started, bump = (r.request for r in fake_cluster.requests.of("InitProducerId"))
    assert started.producer_id == -1
    assert (bump.producer_id >= 0, bump.producer_epoch) == (True, 0)  # KIP-360: bump epoch 0
    assert delivered.offset >= 0
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"next"]


@pytest.mark.parametrize("ending", ["commit_transaction", "abort_transaction"])
async def test_records_sent_while_a_transaction_ends_are_refused(
    fake_cluster: FakeCluster, ending: str
) -> None:
    fake_cluster.create_topic("t")
    async with Producer(fake_cluster.bootstrap, transactional_id="tx", linger_ms=0) as producer:
        producer.begin_transaction()
        await producer.send("t", b"in it", partition=0)
        end = asyncio.create_task(getattr(producer, ending)())
        await asyncio.sleep(0)  # it has begun: waiting for the batch in flight
        with pytest.raises(TransactionStateError, match="cannot send records in state"):
            await producer.send("t", b"late", partition=0)
        await asyncio.wait_for(end, WAIT)
    assert b"late" not in [r.value for r in fake_cluster.records("t", 0)]
