"""The partition assignors of the classic protocol, run by the group leader.

Each takes every member's subscription (topics, and the partitions it owns now) and the
partition count of every topic, and returns each member's partitions. Names and results match
Kafka's Java assignors, so members of other clients that name the same assignor agree:

- ``range``: per topic, the partitions in order, split into contiguous ranges over the members
  subscribed to it, sorted by member id; the first ``count % members`` get one more.
- ``roundrobin``: every partition of every topic, sorted, dealt to the members in member id
  order, skipping members not subscribed to its topic.
- ``sticky``: balanced (member counts differ by at most one where subscriptions allow), and
  moving as few partitions as possible from their current owners.
- ``cooperative-sticky``: the same assignment, but a partition that changes owner is given to
  no one this round: its owner revokes it, rejoins, and the next round hands it over
  (KIP-429), so members keep consuming what they keep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kafkawire.cluster import TopicPartition

__all__ = ["COOPERATIVE", "Member", "assign"]

Assignment = dict[str, list[TopicPartition]]

COOPERATIVE = frozenset({"cooperative-sticky"})
"""Assignors that follow the cooperative rebalance protocol."""


@dataclass(frozen=True, slots=True)
class Member:
    """What the leader knows of one member: its subscription and what it owns now."""

    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...] = ()
    generation: int = -1
    partitions: list[TopicPartition] = field(default_factory=list, compare=False)


def assign(name: str, members: Mapping[str, Member], counts: Mapping[str, int]) -> Assignment:
    """Run assignor ``name`` over ``members`` (by member id) and ``counts`` (topic -> count)."""
    if name == "range":
        return _range(members, counts)
    if name == "roundrobin":
        return _roundrobin(members, counts)
    sticky = _sticky(members, counts)
    if name == "cooperative-sticky":
        return _hold_back_moves(sticky, members)
    return sticky


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


def _sticky(members: Mapping[str, Member], counts: Mapping[str, int]) -> Assignment:
    """Keep valid owned partitions (newest generation wins a partition claimed twice), give
    the rest to the least loaded eligible member, then move partitions from the most to the
    least loaded member until no move narrows the gap."""
    everything = _partitions([t for m in members.values() for t in m.topics], counts)
    exists = set(everything)
    owner: dict[TopicPartition, str] = {}
    for member_id in sorted(members, key=lambda m: members[m].generation):
        member = members[member_id]
        for tp in member.owned:
            if tp in exists and tp.topic in member.topics:
                owner[tp] = member_id
    out: Assignment = {m: [] for m in members}
    for tp in everything:
        if tp in owner:
            out[owner[tp]].append(tp)
    for tp in everything:
        if tp not in owner:
            eligible = [m for m in sorted(members) if tp.topic in members[m].topics]
            out[min(eligible, key=lambda m: len(out[m]))].append(tp)
    _balance(out, members)
    return {m: sorted(tps) for m, tps in out.items()}


def _balance(out: Assignment, members: Mapping[str, Member]) -> None:
    while True:
        by_load = sorted(out, key=lambda m: (len(out[m]), m))
        moved = False
        for giver in reversed(by_load):
            for taker in by_load:
                if len(out[giver]) - len(out[taker]) <= 1:
                    break
                movable = [tp for tp in out[giver] if tp.topic in members[taker].topics]
                if movable:
                    tp = movable[-1]
                    out[giver].remove(tp)
                    out[taker].append(tp)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            return


def _hold_back_moves(assignment: Assignment, members: Mapping[str, Member]) -> Assignment:
    """Drop from the assignment every partition another member still owns (KIP-429)."""
    owned_by = {tp: m for m, member in members.items() for tp in member.owned}
    return {m: [tp for tp in tps if owned_by.get(tp, m) == m] for m, tps in assignment.items()}
