"""A group's committed offsets, once for every client: commit (OffsetCommit), read back
(OffsetFetch) and forget (OffsetDelete), on the group's coordinator.

- Who commits: a consumer group member sends its generation and member id (a KIP-848 member
  its member epoch in the same field), and its group instance id if static; anyone outside
  the group (a consumer with manual assignment, the admin client) sends generation -1 and no
  member id, which brokers accept for a group with no members.
- Topics are named by name: v10 of OffsetCommit and OffsetFetch names them by id only, so
  both are sent at most at v9 (negotiated down where the coordinator is older).
- OffsetFetch batches groups from v8, in a request of another shape; a coordinator at v8+
  gets that shape for one group, an older one the single-group shape (v7 and below). A
  KIP-848 member reads as itself at v9, which carries the member id and epoch: the
  coordinator then refuses a member that is stale or gone instead of answering it.
- Results are per partition: the partitions a commit names each get ``None`` or their
  error; a read gives each partition the broker answered its offset (``-1``: nothing
  committed) or its error. A group-level error is raised.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from kafkawire.cluster import Cluster, TopicPartition
from kafkawire.errors import KafkawireError, error_for_code, raise_for_code
from kafkawire.messages.offset_commit import v9 as offset_commit
from kafkawire.messages.offset_delete import v0 as offset_delete
from kafkawire.messages.offset_fetch import v7 as offset_fetch_single
from kafkawire.messages.offset_fetch import v9 as offset_fetch_batched

from .fanout import by_topic, per_topic, unanswered

__all__ = [
    "NOT_A_MEMBER",
    "OFFSET_FETCH",
    "Generation",
    "OffsetAndMetadata",
    "commit_offsets",
    "committed_offsets",
    "delete_committed_offsets",
]

OFFSET_FETCH = offset_fetch_batched.OffsetFetchRequest.__api_key__
_BATCHED = 8  # the first OffsetFetch version batching groups
_MEMBER = 9  # the first OffsetFetch version with the member id and epoch (KIP-848)
_NAMES_LAST = 9  # the last OffsetCommit and OffsetFetch version naming topics by name


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """A committed offset: the next record to read, with a note of the committer's choosing
    and the leader epoch of the record before it (the consumer's ``OffsetAndMetadata``, the
    admin's ``CommittedOffset``). A read answers offset -1 where nothing is committed."""

    offset: int
    metadata: str = ""
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class Generation:
    """Who commits: the group generation (or KIP-848 member epoch) and member id (``-1``
    and ``""`` outside a group)."""

    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


NOT_A_MEMBER = Generation()


async def commit_offsets(
    cluster: Cluster,
    group_id: str,
    offsets: Mapping[TopicPartition, OffsetAndMetadata],
    generation: Generation = NOT_A_MEMBER,
) -> dict[TopicPartition, KafkawireError | None]:
    """Commit ``offsets`` for ``group_id`` as ``generation``: each partition's error, or
    ``None`` (a stale generation is ``IllegalGenerationError``, a member the group forgot
    ``UnknownMemberIdError``)."""
    m = offset_commit
    wanted = dict(sorted(offsets.items()))
    request = m.OffsetCommitRequest(
        group_id=group_id,
        generation_id_or_member_epoch=generation.generation_id,
        member_id=generation.member_id,
        group_instance_id=generation.group_instance_id,
        topics=per_topic(
            wanted,
            lambda name, ps: m.OffsetCommitRequestTopic(name=name, partitions=ps),
            lambda tp, value: m.OffsetCommitRequestPartition(
                partition_index=tp.partition,
                committed_offset=value.offset,
                committed_leader_epoch=value.leader_epoch,
                committed_metadata=value.metadata,
            ),
        ),
    )
    response = await cluster.send(request, negotiate=True, max_version=_NAMES_LAST)
    return _per_partition(wanted, response, "commit of")


async def committed_offsets(
    cluster: Cluster,
    group_id: str,
    partitions: Collection[TopicPartition] | None,
    member: Generation | None = None,
) -> dict[TopicPartition, OffsetAndMetadata | KafkawireError]:
    """The offsets ``group_id`` committed for ``partitions`` (``None``: every partition it
    committed for), as far as the coordinator answered them. ``member``: a KIP-848 member
    asking as itself (a stale epoch raises ``StaleMemberEpochError``)."""
    topics = None if partitions is None else by_topic(sorted(partitions))
    coordinator = await cluster.coordinator(group_id)
    version = await cluster.versions_for(coordinator, OFFSET_FETCH)
    if version >= _BATCHED:
        answer = await _fetch_batched(cluster, group_id, topics, member, version)
    else:
        m: Any = offset_fetch_single
        request = m.OffsetFetchRequest(group_id=group_id, topics=_fetch_topics(m, topics))
        answer = await cluster.send(request, negotiate=True, max_version=_BATCHED - 1)
    raise_for_code(getattr(answer, "error_code", 0), f"committed offsets of group {group_id!r}")
    found: dict[TopicPartition, OffsetAndMetadata | KafkawireError] = {}
    for topic in answer.topics:
        for p in topic.partitions:
            tp = TopicPartition(topic.name, p.partition_index)
            found[tp] = error_for_code(
                p.error_code, f"committed offset of {tp.topic}/{tp.partition}"
            ) or OffsetAndMetadata(
                p.committed_offset, p.metadata or "", getattr(p, "committed_leader_epoch", -1)
            )
    return found


async def _fetch_batched(
    cluster: Cluster,
    group_id: str,
    topics: dict[str, list[int]] | None,
    member: Generation | None,
    version: int,
) -> Any:
    """OffsetFetch v8+ for one group: the group's part of the answer."""
    m = offset_fetch_batched
    group = m.OffsetFetchRequestGroup(group_id=group_id, topics=_fetch_topics(m, topics))
    if member is not None and member.member_id and version >= _MEMBER:
        group = dataclasses.replace(
            group, member_id=member.member_id, member_epoch=member.generation_id
        )
    request = m.OffsetFetchRequest(groups=(group,))
    response = await cluster.send(request, negotiate=True, max_version=_NAMES_LAST)
    answer = next((g for g in response.groups if g.group_id == group_id), None)
    if answer is None:
        raise unanswered(f"group {group_id!r}", response)
    return answer


def _fetch_topics(module: Any, topics: dict[str, list[int]] | None) -> Any:
    """The topics field of an OffsetFetch request of ``module`` (``None``: all topics)."""
    if topics is None:
        return None
    topic_cls = getattr(module, "OffsetFetchRequestTopics", None) or module.OffsetFetchRequestTopic
    return tuple(topic_cls(name=name, partition_indexes=tuple(ps)) for name, ps in topics.items())


async def delete_committed_offsets(
    cluster: Cluster, group_id: str, partitions: Collection[TopicPartition]
) -> dict[TopicPartition, KafkawireError | None]:
    """Forget ``group_id``'s committed offsets of ``partitions`` (OffsetDelete; the group
    must not be subscribed to their topics): each partition's error, or ``None``."""
    m = offset_delete
    request = m.OffsetDeleteRequest(
        group_id=group_id,
        topics=per_topic(
            dict.fromkeys(partitions),
            lambda name, ps: m.OffsetDeleteRequestTopic(name=name, partitions=ps),
            lambda tp, _: m.OffsetDeleteRequestPartition(partition_index=tp.partition),
        ),
    )
    response = await cluster.send(request, negotiate=True)
    raise_for_code(response.error_code, f"OffsetDelete of group {group_id!r}")
    return _per_partition(partitions, response, "committed offset of")


def _per_partition(
    wanted: Collection[TopicPartition], response: Any, what: str
) -> dict[TopicPartition, KafkawireError | None]:
    """Each partition's error (or None) from an answer listing topics, then partitions."""
    answers = {
        (tp := TopicPartition(t.name, p.partition_index)): error_for_code(
            p.error_code, f"{what} {tp.topic}/{tp.partition}"
        )
        for t in response.topics
        for p in t.partitions
    }
    return {
        tp: answers[tp] if tp in answers else unanswered(f"{tp.topic}/{tp.partition}", response)
        for tp in map(_as_tp, wanted)
    }


def _as_tp(tp: tuple[str, int]) -> TopicPartition:
    return TopicPartition(*tp)
