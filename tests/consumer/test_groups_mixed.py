"""Groups of kafkawire and kafka-python members on Tansu, with each assignor both name.

Whoever joins first leads the group (Tansu keeps the leader through rebalances): so the
order of starting decides whether kafkawire computes the assignment for a kafka-python
follower or the other way round, and the test checks who led. Both members process what a
poll returns and then commit, and commit in their revoke callback, as each client documents:
between them every record is committed exactly once.
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

from kafkawire.consumer import TopicPartition
from kafkawire.consumer.group.assignors import Member, assign
from kafkawire.testing.pytest_plugin import Broker

from .helpers import FAST, Committing, fresh_group, fresh_topic, member, produce_to_all, until

pytestmark = pytest.mark.asyncio(loop_scope="session")

PARTITIONS, EACH = 4, 20

with warnings.catch_warnings():
    # kafka-python 3.0 loads its schemas through a deprecated importlib.resources call.
    warnings.simplefilter("ignore", DeprecationWarning)
    kafka = pytest.importorskip("kafka")
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.errors import KafkaError

THEIR_ASSIGNORS = {
    "range": RangePartitionAssignor,
    "roundrobin": RoundRobinPartitionAssignor,
    "sticky": StickyPartitionAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
}


class KafkaPythonMember(kafka.AsyncConsumerRebalanceListener):  # type: ignore[misc]
    """A kafka-python member that commits as :class:`Committing` does; its blocking calls run
    in a thread. kafka-python 3.0 runs rebalance callbacks on its own IO loop, where a
    blocking commit is refused: the revoke callback awaits the async commit instead."""

    def __init__(self, broker: Broker, topic: str, group: str, assignor: str) -> None:
        self.consumer = kafka.KafkaConsumer(
            bootstrap_servers=broker.bootstrap,
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            partition_assignment_strategy=[THEIR_ASSIGNORS[assignor]],
            session_timeout_ms=FAST["session_timeout_ms"],
            heartbeat_interval_ms=FAST["heartbeat_interval_ms"],
            max_poll_records=5,
        )
        self.done: list[tuple[int, int]] = []
        self._pending: dict[int, list[int]] = {}
        self.consumer.subscribe([topic], listener=self)

    async def step(self) -> None:
        await asyncio.to_thread(self._step)

    def _step(self) -> None:
        batch = self.consumer.poll(timeout_ms=100)
        for tp, records in batch.items():
            self._pending.setdefault(tp.partition, []).extend(r.offset for r in records)
        if batch:
            self._commit()

    def _commit(self) -> None:
        try:
            self.consumer.commit()
        except KafkaError:
            return
        self._committed()

    def _committed(self) -> None:
        for partition in sorted(self._pending):
            self.done.extend((partition, o) for o in self._pending.pop(partition))

    async def on_partitions_revoked(self, revoked: Any) -> None:
        consumed = self.consumer._subscription.all_consumed_offsets()
        try:
            await self.consumer._coordinator._commit_offsets_sync_async(consumed)
        except KafkaError:
            pass
        else:
            self._committed()
        self._drop(revoked)

    async def on_partitions_assigned(self, assigned: Any) -> None:
        pass

    async def on_partitions_lost(self, lost: Any) -> None:
        self._drop(lost)

    def _drop(self, partitions: Any) -> None:
        for tp in partitions:
            self._pending.pop(tp.partition, None)

    def assignment(self) -> set[TopicPartition]:
        return {TopicPartition(tp.topic, tp.partition) for tp in self.consumer.assignment()}

    @property
    def member_id(self) -> str:
        return str(self.consumer._coordinator.group_metadata().member_id)

    @property
    def leader(self) -> bool:
        return bool(self.consumer._coordinator._is_leader)


@pytest.mark.parametrize("leader", ["kafkawire", "kafka-python"])
@pytest.mark.parametrize("assignor", list(THEIR_ASSIGNORS))
async def test_kafkawire_and_kafka_python_share_a_group(
    tansu_broker: Broker, assignor: str, leader: str
) -> None:
    topic = await fresh_topic(tansu_broker, partitions=PARTITIONS)
    everything = await produce_to_all(tansu_broker, topic, PARTITIONS, EACH)
    group = fresh_group(f"mixed-{assignor}")
    options: dict[str, Any] = {
        "partition_assignment_strategy": assignor,
        "enable_auto_commit": False,
        "max_poll_records": 5,
    }
    ours = Committing(member(tansu_broker, topic, group, **options), topic)
    theirs: KafkaPythonMember | None = None
    try:
        if leader == "kafkawire":
            await ours.consumer.start()
            await until(lambda: len(ours.consumer.assignment()) == PARTITIONS, ours)
            theirs = KafkaPythonMember(tansu_broker, topic, group, assignor)
        else:
            theirs = KafkaPythonMember(tansu_broker, topic, group, assignor)
            await until(lambda: len(theirs.assignment()) == PARTITIONS, theirs)
            await ours.consumer.start()
        both = (ours, theirs)
        await until(lambda: len(ours.consumer.assignment()) == 2 == len(theirs.assignment()), *both)
        split = {"kafkawire": ours.consumer.assignment(), "kafka-python": theirs.assignment()}
        assert split["kafkawire"].isdisjoint(split["kafka-python"])
        assert ours.consumer._group.leader is (leader == "kafkawire")  # type: ignore[union-attr]
        assert theirs.leader is (leader == "kafka-python")
        if assignor in ("range", "roundrobin"):  # the one right answer, whoever computed it
            ids = {
                "kafkawire": ours.consumer._group.generation.member_id,
                "kafka-python": theirs.member_id,
            }  # type: ignore[union-attr]
            expected = assign(
                assignor, {i: Member((topic,)) for i in ids.values()}, {topic: PARTITIONS}
            )
            assert {name: set(expected[i]) for name, i in ids.items()} == split
        await until(lambda: len(ours.done) + len(theirs.done) >= len(everything), *both)
    finally:
        await ours.consumer.close()
        if theirs is not None:
            await asyncio.to_thread(theirs.consumer.close)
    assert sorted(ours.done + theirs.done) == sorted(everything)  # each record once
    assert ours.done
    assert theirs.done
