"""The server-side assignors of KIP-848 groups: ``uniform`` (Kafka's default) and ``range``.

Both take every member's subscribed topics (already resolved, regular expressions included)
and the partition counts, and give each member its target partitions. Both are deterministic
(members and topics in sorted order), so a test can predict them.

- ``uniform`` spreads all subscribed partitions as evenly as each member's subscription allows
  and is sticky: a member keeps what it was given before unless it has more than its share
  (floor or ceiling of partitions / members) or no longer subscribes to the topic; what is
  freed goes to the members with the fewest partitions. Kafka's uniform assignor balances the
  same way; its tie-breaks differ.
- ``range`` gives each topic's partitions out in contiguous ranges, in member order (static
  members by instance id first, then dynamic ones by member id), the first ``n % members``
  members one more, as Kafka's server-side range assignor does. Not sticky.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._consumer_member import Partitions, TopicIdPartition

__all__ = ["ASSIGNORS", "DEFAULT_ASSIGNOR", "AssignmentMember", "assign"]

UNIFORM = "uniform"
RANGE = "range"
DEFAULT_ASSIGNOR = UNIFORM
ASSIGNORS = (UNIFORM, RANGE)


@dataclass(frozen=True, slots=True)
class AssignmentMember:
    """What an assignor knows of a member."""

    member_id: str
    instance_id: str | None
    topics: frozenset[str]
    previous: Partitions


def assign(
    assignor: str,
    members: Sequence[AssignmentMember],
    topics: Mapping[str, tuple[uuid.UUID, int]],
) -> dict[str, Partitions]:
    """Each member's target partitions under ``assignor`` (one of :data:`ASSIGNORS`)."""
    if assignor == RANGE:
        return _range(members, topics)
    if assignor == UNIFORM:
        return _uniform(members, topics)
    raise ValueError(f"assignor must be one of {', '.join(ASSIGNORS)}, got {assignor!r}")


def _range(
    members: Sequence[AssignmentMember], topics: Mapping[str, tuple[uuid.UUID, int]]
) -> dict[str, Partitions]:
    ordered = sorted(
        members,
        key=lambda m: (0, m.instance_id, "") if m.instance_id is not None else (1, "", m.member_id),
    )
    result: dict[str, set[TopicIdPartition]] = {m.member_id: set() for m in members}
    for name in sorted(topics):
        topic_id, count = topics[name]
        takers = [m for m in ordered if name in m.topics]
        if not takers:
            continue
        quota, extra = divmod(count, len(takers))
        start = 0
        for index, member in enumerate(takers):
            size = quota + (1 if index < extra else 0)
            result[member.member_id].update((topic_id, p) for p in range(start, start + size))
            start += size
    return {member_id: frozenset(tps) for member_id, tps in result.items()}


def _uniform(
    members: Sequence[AssignmentMember], topics: Mapping[str, tuple[uuid.UUID, int]]
) -> dict[str, Partitions]:
    ordered = sorted(members, key=lambda m: m.member_id)
    if not ordered:
        return {}
    subscribed = frozenset().union(*(m.topics for m in ordered))
    wanted = [
        (name, (topics[name][0], p))
        for name in sorted(subscribed & topics.keys())
        for p in range(topics[name][1])
    ]
    topic_of = {tp: name for name, tp in wanted}
    share, extra = divmod(len(wanted), len(ordered))
    # Keep what is still valid, then let the members with the most keep one extra each.
    kept: dict[str, list[TopicIdPartition]] = {
        m.member_id: sorted(tp for tp in m.previous if topic_of.get(tp) in m.topics)
        for m in ordered
    }
    by_load = sorted(ordered, key=lambda m: (-len(kept[m.member_id]), m.member_id))
    allowed = {m.member_id: share + (1 if i < extra else 0) for i, m in enumerate(by_load)}
    taken: set[TopicIdPartition] = set()
    for member in ordered:
        fresh = [tp for tp in kept[member.member_id] if tp not in taken]
        kept[member.member_id] = fresh[: allowed[member.member_id]]
        taken.update(kept[member.member_id])
    for name, tp in wanted:
        if tp in taken:
            continue
        takers = [m for m in ordered if name in m.topics]
        if takers:
            least = min(takers, key=lambda m: (len(kept[m.member_id]), m.member_id))
            kept[least.member_id].append(tp)
            taken.add(tp)
    return {member_id: frozenset(tps) for member_id, tps in kept.items()}
