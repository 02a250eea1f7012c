"""Share-group requests built by hand, and readers of their answers, for wire-level tests of
the fake cluster's share groups."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafkawire.messages.share_acknowledge import v1 as ack_v1
from kafkawire.messages.share_acknowledge import v2 as ack_v2
from kafkawire.messages.share_fetch import v1 as fetch_v1
from kafkawire.messages.share_fetch import v2 as fetch_v2
from kafkawire.messages.share_group_heartbeat import v1 as sgh
from kafkawire.testing.fake import FakeCluster

__all__ = [
    "ACCEPT",
    "GAP",
    "GROUP",
    "REJECT",
    "RELEASE",
    "RENEW",
    "Acks",
    "acknowledge",
    "acquired",
    "errors",
    "fetch",
    "heartbeat",
    "states",
]

GROUP = "workers"
GAP, ACCEPT, RELEASE, REJECT, RENEW = 0, 1, 2, 3, 4

# partition -> [(first offset, last offset, acknowledge types)]
Acks = Mapping[int, Sequence[tuple[int, int, Sequence[int]]]]


def fetch(
    topic_id: uuid.UUID,
    epoch: int,
    partitions: Iterable[int] = (0,),
    *,
    member: str = "member-1",
    acks: Acks | None = None,
    forgotten: Sequence[int] = (),
    max_records: int = 500,
    batch_size: int = 500,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
    max_bytes: int = 1 << 20,
    mode: int = 0,
    renew: bool = False,
    version: int = 2,
) -> Any:
    """A ShareFetch of ``partitions`` (and of the acknowledged ones) of one topic."""
    module: Any = fetch_v2 if version == 2 else fetch_v1
    acks = acks or {}
    named = list(dict.fromkeys([*partitions, *acks]))
    topics = (
        (
            module.FetchTopic(
                topic_id=topic_id,
                partitions=tuple(
                    module.FetchPartition(
                        partition_index=p, acknowledgement_batches=_batches(module, acks.get(p, ()))
                    )
                    for p in named
                ),
            ),
        )
        if named
        else ()
    )
    extra = {"share_acquire_mode": mode, "is_renew_ack": renew} if version == 2 else {}
    return module.ShareFetchRequest(
        group_id=GROUP,
        member_id=member,
        share_session_epoch=epoch,
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        max_records=max_records,
        batch_size=batch_size,
        topics=topics,
        forgotten_topics_data=(
            module.ForgottenTopic(topic_id=topic_id, partitions=tuple(forgotten)),
        )
        if forgotten
        else (),
        **extra,
    )


def acknowledge(
    topic_id: uuid.UUID,
    epoch: int,
    acks: Acks,
    *,
    member: str = "member-1",
    renew: bool = False,
    version: int = 2,
) -> Any:
    module: Any = ack_v2 if version == 2 else ack_v1
    extra = {"is_renew_ack": renew} if version == 2 else {}
    return module.ShareAcknowledgeRequest(
        group_id=GROUP,
        member_id=member,
        share_session_epoch=epoch,
        topics=(
            module.AcknowledgeTopic(
                topic_id=topic_id,
                partitions=tuple(
                    module.AcknowledgePartition(
                        partition_index=p, acknowledgement_batches=_batches(module, batches)
                    )
                    for p, batches in acks.items()
                ),
            ),
        ),
        **extra,
    )


def _batches(module: Any, batches: Sequence[tuple[int, int, Sequence[int]]]) -> tuple[Any, ...]:
    return tuple(
        module.AcknowledgementBatch(
            first_offset=f, last_offset=last, acknowledge_types=tuple(types)
        )
        for f, last, types in batches
    )


def heartbeat(
    member: str, epoch: int, topics: Sequence[str] | None = ("t",), group: str = GROUP
) -> sgh.ShareGroupHeartbeatRequest:
    return sgh.ShareGroupHeartbeatRequest(
        group_id=group,
        member_id=member,
        member_epoch=epoch,
        subscribed_topic_names=None if topics is None else tuple(topics),
    )


def acquired(response: Any) -> dict[int, list[tuple[int, int, int]]]:
    """Each partition's acquired ranges: (first, last, delivery count)."""
    return {
        p.partition_index: [
            (r.first_offset, r.last_offset, r.delivery_count) for r in p.acquired_records
        ]
        for t in response.responses
        for p in t.partitions
        if p.acquired_records
    }


def errors(response: Any, field: str = "error_code") -> dict[int, int]:
    """Each partition's ``field`` (``error_code`` or ``acknowledge_error_code``)."""
    return {p.partition_index: getattr(p, field) for t in response.responses for p in t.partitions}


def states(cluster: FakeCluster, partition: int = 0) -> dict[int, tuple[str, int]]:
    """Each in-flight offset's (state name, delivery count) in the share partition."""
    share = cluster.share_partition(GROUP, "t", partition)
    assert share is not None
    return {o: (r.state.name, r.delivery_count) for o, r in share.records.items()}
