"""A group coordinator on a stand-in cluster and a hand-driven clock, and requests to send it.

Sans-IO: requests are the generated message objects, handed to ``GroupCoordinator.handle``
directly. Held requests (a JoinGroup during a rebalance, a follower's SyncGroup) run as tasks;
:meth:`Harness.settle` lets every task that can go on do so, and a test then checks which are
still held. Time moves only by :meth:`Harness.advance`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.member_data import decode_assignment, encode_assignment, encode_subscription
from kafkawire.messages import request_type
from kafkawire.messages.consumer_group_heartbeat import v1 as cgh
from kafkawire.messages.heartbeat import v4 as heartbeat
from kafkawire.messages.join_group import v9 as join_group
from kafkawire.messages.leave_group import v5 as leave_group
from kafkawire.messages.offset_commit import v9 as commit9
from kafkawire.messages.offset_fetch import v9 as fetch9
from kafkawire.messages.sync_group import v5 as sync_group
from kafkawire.protocol.versions import convert, struct_type
from kafkawire.testing.fake.clock import ManualClock
from kafkawire.testing.fake.config import FakeConfig
from kafkawire.testing.fake.groups import GroupCoordinator
from kafkawire.testing.fake.view import ShareStartOffset

__all__ = [
    "Harness",
    "Shares",
    "View",
    "assignment_bytes",
    "commit",
    "consumer_heartbeat",
    "decode_assignment",
    "fetch",
    "heartbeat_request",
    "join",
    "leave",
    "subscription",
    "sync",
]

GROUP = "g"


class Clock(Protocol):
    def now(self) -> float: ...


@dataclass
class View:
    """A cluster as the coordinator sees it: topics, which node coordinates which group,
    which offsets open transactions hold."""

    clock: Clock
    partitions: dict[str, int] = field(default_factory=dict)
    coordinators: dict[str, int] = field(default_factory=dict)
    ids: dict[str, uuid.UUID] = field(default_factory=dict)
    pending: dict[str, frozenset[tuple[str, int]]] = field(default_factory=dict)

    def topics(self) -> Mapping[str, tuple[uuid.UUID, int]]:
        return {
            name: (self.ids.setdefault(name, uuid.uuid4()), count)
            for name, count in self.partitions.items()
        }

    def coordinator_for(self, group_id: str) -> int:
        return self.coordinators.get(group_id, 0)

    def now(self) -> float:
        return self.clock.now()

    def node_ids(self) -> Sequence[int]:
        return (0, 1, 2)

    def pending_transactional_offsets(self, group_id: str) -> frozenset[tuple[str, int]]:
        return self.pending.get(group_id, frozenset())

    def topic_id(self, name: str) -> uuid.UUID:
        return self.topics()[name][0]


@dataclass
class Shares:
    """Share partitions' state as the coordinator sees it: a stand-in for the share package."""

    offsets: dict[str, dict[tuple[uuid.UUID, int], ShareStartOffset]] = field(default_factory=dict)

    def share_start_offsets(
        self, group_id: str
    ) -> Mapping[tuple[uuid.UUID, int], ShareStartOffset]:
        return self.offsets.get(group_id, {})

    def set_share_start_offsets(
        self, group_id: str, offsets: Mapping[tuple[uuid.UUID, int], int]
    ) -> None:
        mine = self.offsets.setdefault(group_id, {})
        for key, offset in offsets.items():
            mine[key] = ShareStartOffset(offset, 0, -1)

    def delete_share_states(self, group_id: str, topic_ids: Collection[uuid.UUID] | None) -> None:
        mine = self.offsets.get(group_id, {})
        for key in [k for k in mine if topic_ids is None or k[0] in topic_ids]:
            del mine[key]


class Harness:
    """A coordinator, its clock, and helpers to talk to it."""

    def __init__(self, partitions: Mapping[str, int] | None = None, **settings: int) -> None:
        self.clock = ManualClock(1000.0)
        self.view = View(self.clock, dict(partitions or {"t": 4}))
        self.shares = Shares()
        self.coordinator = GroupCoordinator(
            self.view, FakeConfig().replace(**settings), self.shares
        )
        self.clock.attach(self.coordinator.timers)

    async def send(self, request: Any, node: int = 0, client_id: str = "client") -> Any:
        """The answer to a request that must not be held."""
        return await asyncio.wait_for(
            self.coordinator.handle(request, node, client_id=client_id, client_host="/127.0.0.1"),
            timeout=5,
        )

    def start(self, request: Any, node: int = 0, client_id: str = "client") -> asyncio.Task[Any]:
        """Send a request that may be held; await the task for its answer."""
        return asyncio.ensure_future(
            self.coordinator.handle(request, node, client_id=client_id, client_host="/127.0.0.1")
        )

    @staticmethod
    async def settle() -> None:
        """Let every task that can run do so."""
        for _ in range(10):
            await asyncio.sleep(0)

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)


def subscription(topics: Iterable[str] = ("t",)) -> bytes:
    return encode_subscription(topics)


def assignment_bytes(*partitions: tuple[str, int]) -> bytes:
    return encode_assignment(TopicPartition(t, p) for t, p in partitions)


def join(
    member_id: str = "",
    *,
    version: int = 9,
    group: str = GROUP,
    instance: str | None = None,
    session_ms: int = 10_000,
    rebalance_ms: int = 30_000,
    protocols: Sequence[tuple[str, bytes]] | None = None,
    protocol_type: str = "consumer",
) -> Any:
    protocols = protocols if protocols is not None else (("range", subscription()),)
    request = join_group.JoinGroupRequest(
        group_id=group,
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=rebalance_ms if version else -1,
        member_id=member_id,
        group_instance_id=instance,
        protocol_type=protocol_type,
        protocols=tuple(
            join_group.JoinGroupRequestProtocol(name=n, metadata=m) for n, m in protocols
        ),
    )
    return convert(request, version)


def sync(
    member_id: str,
    generation: int,
    assignments: Mapping[str, bytes] | None = None,
    *,
    version: int = 5,
    group: str = GROUP,
    instance: str | None = None,
    protocol: str | None = "range",
) -> Any:
    request = sync_group.SyncGroupRequest(
        group_id=group,
        generation_id=generation,
        member_id=member_id,
        group_instance_id=instance,
        protocol_type="consumer" if version >= 5 and protocol else None,
        protocol_name=protocol if version >= 5 else None,
        assignments=tuple(
            sync_group.SyncGroupRequestAssignment(member_id=m, assignment=a)
            for m, a in (assignments or {}).items()
        ),
    )
    return convert(request, version)


def heartbeat_request(
    member_id: str,
    generation: int,
    *,
    version: int = 4,
    group: str = GROUP,
    instance: str | None = None,
) -> Any:
    request = heartbeat.HeartbeatRequest(
        group_id=group, generation_id=generation, member_id=member_id, group_instance_id=instance
    )
    return convert(request, version)


def leave(*members: tuple[str, str | None], version: int = 5, group: str = GROUP) -> Any:
    if version < 3:
        ((member_id, _),) = members
        return request_type(13, version)(group_id=group, member_id=member_id)
    request = leave_group.LeaveGroupRequest(
        group_id=group,
        members=tuple(
            leave_group.MemberIdentity(member_id=m, group_instance_id=i) for m, i in members
        ),
    )
    return convert(request, version)


def commit(
    offsets: Mapping[tuple[str, int], int],
    *,
    version: int = 9,
    group: str = GROUP,
    generation: int = -1,
    member_id: str = "",
    instance: str | None = None,
    leader_epoch: int = -1,
    metadata: str | None = "",
) -> Any:
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for (topic, partition), offset in offsets.items():
        by_topic.setdefault(topic, []).append((partition, offset))
    request = commit9.OffsetCommitRequest(
        group_id=group,
        generation_id_or_member_epoch=generation,
        member_id=member_id,
        group_instance_id=instance,
        topics=tuple(
            commit9.OffsetCommitRequestTopic(
                name=topic,
                partitions=tuple(
                    commit9.OffsetCommitRequestPartition(
                        partition_index=p,
                        committed_offset=o,
                        committed_leader_epoch=leader_epoch if version >= 6 else -1,
                        committed_metadata=metadata,
                    )
                    for p, o in partitions
                ),
            )
            for topic, partitions in by_topic.items()
        ),
    )
    return convert(request, version)


def fetch(
    partitions: Iterable[tuple[str, int]] | None,
    *,
    version: int = 9,
    group: str = GROUP,
    member_id: str | None = None,
    member_epoch: int = -1,
) -> Any:
    topics = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        topics = tuple(
            fetch9.OffsetFetchRequestTopics(name=t, partition_indexes=tuple(ps))
            for t, ps in by_topic.items()
        )
    if version >= 8:
        request = fetch9.OffsetFetchRequest(
            groups=(
                fetch9.OffsetFetchRequestGroup(
                    group_id=group, member_id=member_id, member_epoch=member_epoch, topics=topics
                ),
            )
        )
        return convert(request, version)
    old = request_type(9, version)
    topic_type = struct_type(old, "topics")
    old_topics = (
        None
        if topics is None
        else tuple(topic_type(name=t.name, partition_indexes=t.partition_indexes) for t in topics)
    )
    return old(group_id=group, topics=old_topics)


def consumer_heartbeat(
    member_id: str,
    epoch: int,
    *,
    version: int = 1,
    group: str = GROUP,
    topics: Sequence[str] | None = None,
    regex: str | None = None,
    owned: Mapping[uuid.UUID, Sequence[int]] | None = None,
    rebalance_ms: int = -1,
    instance: str | None = None,
    assignor: str | None = None,
) -> Any:
    """A ConsumerGroupHeartbeat; ``epoch`` 0 is a full join (timeout and empty owned list)."""
    joining = epoch == 0
    request = cgh.ConsumerGroupHeartbeatRequest(
        group_id=group,
        member_id=member_id,
        member_epoch=epoch,
        instance_id=instance,
        rebalance_timeout_ms=30_000 if joining and rebalance_ms == -1 else rebalance_ms,
        subscribed_topic_names=tuple(topics) if topics is not None else None,
        subscribed_topic_regex=regex,
        server_assignor=assignor,
        topic_partitions=(
            ()
            if joining and owned is None
            else None
            if owned is None
            else tuple(
                cgh.ConsumerGroupHeartbeatRequestTopicPartitions(topic_id=t, partitions=tuple(ps))
                for t, ps in owned.items()
            )
        ),
    )
    return convert(request, version)
