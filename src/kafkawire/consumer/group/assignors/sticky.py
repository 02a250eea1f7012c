"""The sticky assignors, ``sticky`` (eager) and ``cooperative-sticky`` (KIP-429).

The rules they keep are Kafka's Java ``AbstractStickyAssignor``'s; its tests are ported as
``tests/consumer/test_assignors.py``:

1. Who owns what now: each member's claimed partitions (``Member.owned``) that still exist and
   whose topic it still subscribes to. A partition two members claim goes to the claim of the
   newer generation; two claims of one generation cancel out (neither member keeps it).
2. Valid: a member gets only partitions of topics it subscribes to, and every partition of a
   subscribed topic goes to exactly one member.
3. Balanced: when every member subscribes to the same topics, their counts differ by at most
   one. Otherwise no partition can move to a member subscribed to its topic that has at least
   two fewer (as balanced as moving single partitions can make it).
4. Sticky: members keep what they own except what balance takes away. With the same topics
   for all, as many owned partitions as the quotas allow are kept; in every case no two
   members swap partitions of one topic.
5. Cooperative: a partition that changes owner goes to no one while a member that claims it
   may still hold it; its owner gives it up and the next rebalance hands it over.

Two algorithms, as in the Java client: quotas when all subscriptions are equal (each member
gets ``floor(n/m)`` partitions, and ``n % m`` of them one more), and otherwise a general one
(free partitions to the least loaded member, the most constrained first, then single moves).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from kafkawire.cluster import TopicPartition

if TYPE_CHECKING:
    from .assignors import Assignment, Member

__all__ = ["cooperative_sticky", "sticky"]


def sticky(members: Mapping[str, Member], counts: Mapping[str, int]) -> Assignment:
    owners, _ = _owners(members, counts)
    if len({frozenset(m.topics) for m in members.values()}) == 1:
        out = _by_quotas(members, counts, owners)
    else:
        out = _general(members, counts, owners)
    return {m: sorted(tps) for m, tps in out.items()}


def cooperative_sticky(members: Mapping[str, Member], counts: Mapping[str, int]) -> Assignment:
    """The sticky assignment without the partitions another member may still hold (rule 5)."""
    owners, _ = _owners(members, counts)
    claimers: dict[TopicPartition, set[str]] = {}
    for member_id, member in members.items():
        for tp in member.owned:
            claimers.setdefault(tp, set()).add(member_id)
    return {
        m: [tp for tp in tps if claimers.get(tp, {m}) == {m} or owners.get(tp) == m]
        for m, tps in sticky(members, counts).items()
    }


def _owners(
    members: Mapping[str, Member], counts: Mapping[str, int]
) -> tuple[dict[TopicPartition, str], set[TopicPartition]]:
    """The member that validly owns each partition (rule 1), and the partitions whose claims
    cancel out."""
    best: dict[TopicPartition, tuple[int, str]] = {}
    cancelled: set[TopicPartition] = set()
    for member_id in sorted(members):
        member = members[member_id]
        for tp in member.owned:
            if tp.topic not in member.topics or not 0 <= tp.partition < counts.get(tp.topic, 0):
                continue
            claim = best.get(tp)
            if claim is None or member.generation > claim[0]:
                best[tp] = (member.generation, member_id)
                cancelled.discard(tp)
            elif member.generation == claim[0]:
                cancelled.add(tp)
    return {tp: m for tp, (_, m) in best.items() if tp not in cancelled}, cancelled


def _all_partitions(topics: set[str], counts: Mapping[str, int]) -> list[TopicPartition]:
    return [TopicPartition(t, p) for t in sorted(topics) for p in range(counts.get(t, 0))]


def _by_quotas(
    members: Mapping[str, Member],
    counts: Mapping[str, int],
    owners: Mapping[TopicPartition, str],
) -> dict[str, list[TopicPartition]]:
    """Every member subscribes to the same topics: each keeps up to its quota of what it owns
    (members in id order take the ``extra`` places for one more), then the free partitions are
    dealt round robin to the members under ``floor``, and the rest one each to members at it."""
    everything = _all_partitions({t for m in members.values() for t in m.topics}, counts)
    floor, extra = divmod(len(everything), len(members))
    owned: dict[str, list[TopicPartition]] = {m: [] for m in members}
    for tp, member_id in sorted(owners.items()):
        owned[member_id].append(tp)
    out: dict[str, list[TopicPartition]] = {}
    below: list[str] = []  # members under floor
    at_floor: list[str] = []  # members at floor that may take one more
    over = 0  # members keeping floor + 1
    for member_id in sorted(members):
        mine = owned[member_id]
        if len(mine) < floor:
            out[member_id] = mine
            below.append(member_id)
        elif len(mine) > floor and over < extra:
            out[member_id] = mine[: floor + 1]
            over += 1
        else:
            out[member_id] = mine[:floor]
            at_floor.append(member_id)
    if over == extra:
        at_floor.clear()
    kept = {tp for tps in out.values() for tp in tps}
    turn = 0
    for tp in (tp for tp in everything if tp not in kept):
        if below:
            turn %= len(below)
            member_id = below[turn]
            out[member_id].append(tp)
            if len(out[member_id]) == floor:
                at_floor.append(below.pop(turn))
            else:
                turn += 1
        else:
            out[at_floor.pop(0)].append(tp)
    return out


def _general(
    members: Mapping[str, Member],
    counts: Mapping[str, int],
    owners: Mapping[TopicPartition, str],
) -> dict[str, list[TopicPartition]]:
    """Subscriptions differ: keep what is owned, give each free partition (those of the
    topics with the fewest subscribers first) to its least loaded subscriber, then move single
    partitions until none can narrow a gap of two (rule 3)."""
    subscribers: dict[str, list[str]] = {}
    for member_id in sorted(members):
        for topic in members[member_id].topics:
            if counts.get(topic, 0) > 0:
                subscribers.setdefault(topic, []).append(member_id)
    out: dict[str, list[TopicPartition]] = {m: [] for m in members}
    for tp, member_id in owners.items():
        out[member_id].append(tp)
    free = [tp for tp in _all_partitions(set(subscribers), counts) if tp not in owners]
    free.sort(key=lambda tp: (len(subscribers[tp.topic]), tp))
    for tp in free:
        out[min(subscribers[tp.topic], key=lambda m: (len(out[m]), m))].append(tp)
    topics = {m: frozenset(member.topics) for m, member in members.items()}
    while (move := _move(out, topics, owners)) is not None:
        tp, giver, taker = move
        out[giver].remove(tp)
        out[taker].append(tp)
    return out


def _move(
    out: Mapping[str, list[TopicPartition]],
    topics: Mapping[str, frozenset[str]],
    owners: Mapping[TopicPartition, str],
) -> tuple[TopicPartition, str, str] | None:
    """A partition that can go from a member to one with at least two fewer, the most loaded
    giver and least loaded taker first; or ``None``. It prefers a partition that returns to
    the taker, which owned it, then one its giver did not own: so no two members swap
    partitions, and owned partitions move last."""
    by_load = sorted(out, key=lambda m: (len(out[m]), m))
    for giver in reversed(by_load):
        for taker in by_load:
            if len(out[giver]) - len(out[taker]) < 2:
                break
            movable = [tp for tp in out[giver] if tp.topic in topics[taker]]
            if movable:
                return min(movable, key=_cost(owners, giver, taker)), giver, taker
    return None


def _cost(
    owners: Mapping[TopicPartition, str], giver: str, taker: str
) -> Callable[[TopicPartition], tuple[int, TopicPartition]]:
    """What moving a partition from ``giver`` to ``taker`` costs in stickiness: nothing if it
    returns to its owner, little if ``giver`` did not own it, most if it did."""

    def cost(tp: TopicPartition) -> tuple[int, TopicPartition]:
        owner = owners.get(tp)
        return (0 if owner == taker else 2 if owner == giver else 1), tp

    return cost
