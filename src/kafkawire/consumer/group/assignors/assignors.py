"""The partition assignors of the classic protocol, run by the group leader.

Each takes every member's subscription (topics, and the partitions it owns now) and the
partition count of every topic, and returns each member's partitions. Names and results match
Kafka's Java assignors, so members of other clients that name the same assignor agree:

- ``range``: per topic, the partitions in order, split into contiguous ranges over the members
  subscribed to it, sorted by member id; the first ``count % members`` get one more.
- ``roundrobin``: every partition of every topic, sorted, dealt to the members in member id
  order, skipping members not subscribed to its topic.
- ``sticky``: balanced (member counts differ by at most one where subscriptions allow), and
  moving as few partitions as possible from their current owners (:mod:`.sticky`).
- ``cooperative-sticky``: the same assignment, but a partition that changes owner is given to
  no one this round: its owner revokes it, rejoins, and the next round hands it over
  (KIP-429), so members keep consuming what they keep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafkawire.cluster import TopicPartition

from .sticky import cooperative_sticky, sticky

__all__ = ["COOPERATIVE", "Member", "assign"]

Assignment = dict[str, list[TopicPartition]]

COOPERATIVE = frozenset({"cooperative-sticky"})
"""Assignors that follow the cooperative rebalance protocol."""


@dataclass(frozen=True, slots=True)
class Member:
    """What the leader knows of one member: its subscription, what it owns now, and the
    generation in which it got those."""

    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...] = ()
    generation: int = -1


def assign(name: str, members: Mapping[str, Member], counts: Mapping[str, int]) -> Assignment:
    """Run assignor ``name`` over ``members`` (by member id) and ``counts`` (topic -> count)."""
    if name == "range":
        return _range(members, counts)
    if name == "roundrobin":
        return _roundrobin(members, counts)
    if name == "cooperative-sticky":
        return cooperative_sticky(members, counts)
    return sticky(members, counts)


def _partitions(topics: Sequence[str], counts: Mapping[str, int]) -> list[TopicPartition]:
    return [TopicPartition(t, p) for t in sorted(set(topics)) for p in range(counts.get(t, 0))]


def _range(members: Mapping[str, Member], counts: Mapping[str, int]) -> Assignment:
    out: Assignment = {m: [] for m in members}
    topics = sorted({t for m in members.values() for t in m.topics})
    for topic in topics:
        subscribed = sorted(m for m, s in members.items() if topic in s.topics)
        count = counts.get(topic, 0)
        each, extra = divmod(count, len(subscribed))
        start = 0
        for i, member in enumerate(subscribed):
            size = each + (1 if i < extra else 0)
            out[member] += [TopicPartition(topic, p) for p in range(start, start + size)]
            start += size
    return out


def _roundrobin(members: Mapping[str, Member], counts: Mapping[str, int]) -> Assignment:
    out: Assignment = {m: [] for m in members}
    order = sorted(members)
    if not order:
        return out
    topics = [t for m in members.values() for t in m.topics]
    turn = 0
    for tp in _partitions(topics, counts):
        for _ in range(len(order)):
            member = order[turn % len(order)]
            turn += 1
            if tp.topic in members[member].topics:
                out[member].append(tp)
                break
    return out
