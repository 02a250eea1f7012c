"""The share groups' assignor, ``simple`` (Kafka's ``SimpleAssignor``).

Partitions of a share group are shared: a partition may go to several members, which read it
cooperatively (the share partition hands each record to one of them at a time). The assignor
balances, as Kafka's homogeneous builder does:

- each partition goes to ``ceil(members / partitions)`` members (its *sharing*): one when
  there are at least as many partitions as members, more when there are more members;
- member *i* (in member id order) gets ``ceil(s * (i + 1)) - ceil(s * i)`` partitions, where
  ``s = sharing * partitions / members``, so counts differ by at most one;
- it is sticky: a member keeps what it had while that stays within both bounds, and only
  then are the partitions still short of members handed out, in turn.

Topics subscribed by the same members are assigned together; topics whose subscribers differ
are assigned apart (Kafka's heterogeneous builder balances across them too; the fake does not).
Which member gets which partition may differ from Kafka's (its maps are unordered); the counts
and the sharing are Kafka's.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from ._consumer_member import Partitions, TopicIdPartition

__all__ = ["SIMPLE", "assign_shares"]

SIMPLE = "simple"


def assign_shares(
    subscriptions: Mapping[str, frozenset[str]],
    previous: Mapping[str, Partitions],
    topics: Mapping[str, tuple[uuid.UUID, int]],
) -> dict[str, Partitions]:
    """Each member's target partitions: ``subscriptions`` maps member id -> topic names,
    ``previous`` member id -> its current target, ``topics`` name -> (id, partitions)."""
    result: dict[str, set[TopicIdPartition]] = {m: set() for m in subscriptions}
    together: dict[tuple[str, ...], list[str]] = {}
    for name in sorted(topics):
        takers = tuple(sorted(m for m, wanted in subscriptions.items() if name in wanted))
        if takers:
            together.setdefault(takers, []).append(name)
    for takers, names in together.items():
        partitions = [(topics[n][0], p) for n in names for p in range(topics[n][1])]
        for member_id, given in _balanced(takers, partitions, previous).items():
            result[member_id] |= given
    return {member_id: frozenset(given) for member_id, given in result.items()}


def _balanced(
    members: Sequence[str],
    partitions: Sequence[TopicIdPartition],
    previous: Mapping[str, Partitions],
) -> dict[str, set[TopicIdPartition]]:
    if not partitions:
        return {}
    count, total = len(members), len(partitions)
    sharing = -(-count // total)
    slots = sharing * total
    desired = {
        m: -(-slots * (i + 1) // count) - -(-slots * i // count) for i, m in enumerate(members)
    }
    holders: dict[TopicIdPartition, list[str]] = {tp: [] for tp in partitions}
    given: dict[str, set[TopicIdPartition]] = {m: set() for m in members}
    for member_id in members:
        for tp in sorted(previous.get(member_id, frozenset()) & holders.keys()):
            if len(given[member_id]) < desired[member_id] and len(holders[tp]) < sharing:
                given[member_id].add(tp)
                holders[tp].append(member_id)
    unfilled = [m for m in members if len(given[m]) < desired[m]]
    turn = 0
    for tp in partitions:
        tried = 0
        while len(holders[tp]) < sharing and unfilled and tried < len(unfilled):
            member_id = unfilled[turn % len(unfilled)]
            if tp in given[member_id]:
                turn += 1
                tried += 1
                continue
            given[member_id].add(tp)
            holders[tp].append(member_id)
            tried = 0
            if len(given[member_id]) >= desired[member_id]:
                unfilled.remove(member_id)
            else:
                turn += 1
    return given
