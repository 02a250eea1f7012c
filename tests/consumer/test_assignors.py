"""The assignors on their own.

Range and roundrobin give Java's exact results. The sticky assignors are checked against the
cases of Kafka's Java tests (``AbstractStickyAssignorTest``, ``CooperativeStickyAssignorTest``),
ported: their inputs, and the properties they assert, which are the rules in
:mod:`kafkawire.consumer.group.assignors.sticky`. Where a Java test asserts one exact
assignment, it is kept when it follows from the rules; where Java's answer depends on the
iteration order of its hash maps, the test asserts the properties instead and says so.
Hypothesis then runs the same properties over random groups, subscriptions and changes.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.group.assignors import Member, assign
from tests.budgets import examples

Assignment = dict[str, list[TopicPartition]]
STICKY = ["sticky", "cooperative-sticky"]


def tps(topic: str, *partitions: int) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for p in partitions]


def parse(text: str) -> list[TopicPartition]:
    """``"t1-0, t2-3"`` as partitions (the notation of Java's rack-aware tests)."""
    return sorted(
        TopicPartition(name, int(p))
        for name, p in (s.strip().rsplit("-", 1) for s in text.split(","))
    )


def same(topics: tuple[str, ...], *names: str) -> dict[str, Member]:
    return {name: Member(topics) for name in names}


def owning(
    members: Mapping[str, Member], result: Assignment, generation: int = 1
) -> dict[str, Member]:
    """The members again, each owning what ``result`` gave it (its next subscription)."""
    return {m: Member(s.topics, tuple(result.get(m, ())), generation) for m, s in members.items()}


# --- the properties ---------------------------------------------------------------------------


def check_valid(
    members: Mapping[str, Member], counts: Mapping[str, int], result: Assignment
) -> None:
    """Every member has an entry, gets only partitions of its topics, no partition twice, and
    every partition of a subscribed topic is assigned."""
    assert set(result) == set(members)
    given_out = [tp for tps_ in result.values() for tp in tps_]
    assert len(given_out) == len(set(given_out)), "a partition went to two members"
    for m, assigned in result.items():
        assert all(tp.topic in members[m].topics for tp in assigned), (m, assigned)
    subscribed = {t for s in members.values() for t in s.topics}
    assert set(given_out) == {
        TopicPartition(t, p) for t in subscribed for p in range(counts.get(t, 0))
    }


def check_balanced(members: Mapping[str, Member], result: Assignment) -> None:
    """Counts within one when all subscribe alike; otherwise no partition can go to a member
    subscribed to its topic that has at least two fewer (Java's verifyValidityAndBalance, with
    subscriptions where it looks at what the lighter member was given)."""
    if len({frozenset(s.topics) for s in members.values()}) == 1:
        sizes = [len(v) for v in result.values()]
        assert max(sizes) - min(sizes) <= 1, result
        return
    for heavy, light in itertools.permutations(result, 2):
        if len(result[heavy]) - len(result[light]) >= 2:
            movable = [tp for tp in result[heavy] if tp.topic in members[light].topics]
            assert not movable, f"{movable} could go from {heavy} to {light}: {result}"


def check_no_swaps(members: Mapping[str, Member], result: Assignment) -> None:
    """No two members swap partitions of one topic (Java's isSticky)."""
    moves = {
        (tp.topic, before, after)
        for after, assigned in result.items()
        for tp in assigned
        for before, s in members.items()
        if before != after and tp in s.owned
    }
    assert not {(t, b, a) for t, a, b in moves} & moves, moves


def settle(name: str, members: Mapping[str, Member], counts: Mapping[str, int]) -> Assignment:
    """Assign; for cooperative-sticky, rebalance again while partitions are revoked, checking
    that no partition goes to a new owner in the round its owner gives it up (Java's
    CooperativeStickyAssignorTest.verifyValidityAndBalance). The final assignment is checked
    valid and balanced."""
    result = assign(name, members, counts)
    rounds = 0
    while name == "cooperative-sticky":
        revoked = {tp for m, s in members.items() for tp in s.owned if tp not in result[m]}
        added = {
            tp for m, assigned in result.items() for tp in assigned if tp not in members[m].owned
        }
        assert not revoked & added, f"{revoked & added} given to a new owner as they are revoked"
        if not revoked:
            break
        rounds += 1
        assert rounds <= 4
        members = owning(members, result)
        result = assign(name, members, counts)
    check_valid(members, counts, result)
    check_balanced(members, result)
    return result


# --- range and roundrobin ---------------------------------------------------------------------


def test_range_splits_each_topic_in_contiguous_ranges() -> None:
    members = same(("t", "u"), "a", "b")
    result = assign("range", members, {"t": 3, "u": 2})
    assert result == {"a": tps("t", 0, 1) + tps("u", 0), "b": tps("t", 2) + tps("u", 1)}


def test_roundrobin_deals_sorted_partitions_skipping_unsubscribed_members() -> None:
    members = {"a": Member(("t",)), "b": Member(("t", "u")), "c": Member(("u",))}
    result = assign("roundrobin", members, {"t": 3, "u": 3})
    assert result == {
        "a": tps("t", 0, 2),
        "b": tps("t", 1) + tps("u", 0, 2),  # the turn passes a, which lacks u
        "c": tps("u", 1),
    }


@pytest.mark.parametrize("name", ["range", "roundrobin", *STICKY])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_every_partition_once_and_balanced(name: str, count: int) -> None:
    members = same(("t",), *(f"m{i}" for i in range(count)))
    settle(name, members, {"t": 7})


# --- Java's sticky cases: one member, no topics -----------------------------------------------


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize(
    ("topics", "counts", "expected"),
    [
        ((), {}, []),  # testOneConsumerNoTopic
        (("topic",), {"topic": 0}, []),  # testOneConsumerNonexistentTopic
        (("topic",), {"topic": 3}, tps("topic", 0, 1, 2)),  # testOneConsumerOneTopic
        (("t1", "t2"), {"t1": 1, "t2": 2}, tps("t1", 0) + tps("t2", 0, 1)),  # ...MultipleTopics
        (("t1", "t2", "t3"), {"t1": 1, "t3": 100}, tps("t1", 0) + tps("t3", *range(100))),
    ],
)
def test_one_member(
    name: str, topics: tuple[str, ...], counts: dict[str, int], expected: list[TopicPartition]
) -> None:
    """...and testAssignmentUpdatedForDeletedTopic (t2 does not exist)."""
    assert settle(name, {"c": Member(topics)}, counts) == {"c": expected}


@pytest.mark.parametrize("name", STICKY)
def test_only_partitions_of_subscribed_topics(name: str) -> None:
    """testOnlyAssignsPartitionsFromSubscribedTopics; and testNoExceptionThrownWhen
    OnlySubscribedTopicDeleted."""
    owned = (*tps("topic", 0, 1), *tps("other", 0, 1))
    assert assign(name, {"c": Member(("topic",), owned, 1)}, {"topic": 2}) == {
        "c": tps("topic", 0, 1)
    }
    assert assign(name, {"c": Member(("topic",), tuple(tps("topic", 0, 1)), 1)}, {}) == {"c": []}


# --- Java's sticky cases: exact assignments ---------------------------------------------------


@pytest.mark.parametrize("name", STICKY)
def test_two_members_one_topic(name: str) -> None:
    """testTwoConsumersOneTopicOnePartition, testTwoConsumersOneTopicTwoPartitions."""
    members = same(("topic",), "c1", "c2")
    assert sorted(len(v) for v in settle(name, members, {"topic": 1}).values()) == [0, 1]
    assert settle(name, members, {"topic": 2}) == {"c1": tps("topic", 0), "c2": tps("topic", 1)}


@pytest.mark.parametrize("name", STICKY)
def test_two_members_two_topics_six_partitions(name: str) -> None:
    """testTwoConsumersTwoTopicsSixPartitions: dealt round robin."""
    result = settle(name, same(("t1", "t2"), "c1", "c2"), {"t1": 3, "t2": 3})
    assert result == {"c1": tps("t1", 0, 2) + tps("t2", 1), "c2": tps("t1", 1) + tps("t2", 0, 2)}


@pytest.mark.parametrize("name", STICKY)
def test_mixed_subscriptions(name: str) -> None:
    """testMultipleConsumersMixedTopicSubscriptions: t2's partitions (one subscriber) go first."""
    members = {"c1": Member(("t1",)), "c2": Member(("t1", "t2")), "c3": Member(("t1",))}
    result = settle(name, members, {"t1": 3, "t2": 2})
    assert result == {"c1": tps("t1", 0, 2), "c2": tps("t2", 0, 1), "c3": tps("t1", 1)}


@pytest.mark.parametrize("name", STICKY)
def test_non_equal_subscriptions_without_racks(name: str) -> None:
    """testRackAwareAssignmentWithNonEqualSubscription, its assignment without racks; and
    the uniform case of testRackAwareAssignmentWithUniformSubscription."""
    counts = {"t1": 6, "t2": 7, "t3": 2}
    every = ("t1", "t2", "t3")
    members = {"c0": Member(every), "c1": Member(every), "c2": Member(("t1", "t3"))}
    assert settle(name, members, counts) == {
        "c0": parse("t1-5, t2-0, t2-2, t2-4, t2-6"),
        "c1": parse("t1-3, t2-1, t2-3, t2-5, t3-0"),
        "c2": parse("t1-0, t1-1, t1-2, t1-4, t3-1"),
    }
    assert settle(name, same(every, "c0", "c1", "c2"), counts) == {
        "c0": parse("t1-0, t1-3, t2-0, t2-3, t2-6"),
        "c1": parse("t1-1, t1-4, t2-1, t2-4, t3-0"),
        "c2": parse("t1-2, t1-5, t2-2, t2-5, t3-1"),
    }


@pytest.mark.parametrize("name", STICKY)
def test_owning_min_quota_and_expecting_max_quota(name: str) -> None:
    """testConsumerOwningMinQuotaExpectedMaxQuota."""
    topics = ("t1", "t2")
    members = {
        "c1": Member(topics, (*tps("t1", 0), *tps("t2", 1)), 1),
        "c2": Member(topics, (*tps("t1", 1), *tps("t2", 2)), 1),
    }
    result = settle(name, members, {"t1": 2, "t2": 3})
    assert result == {"c1": tps("t1", 0) + tps("t2", 0, 1), "c2": tps("t1", 1) + tps("t2", 2)}


@pytest.mark.parametrize("name", STICKY)
def test_more_members_owning_max_quota_than_may_keep_it(name: str) -> None:
    """testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers. Java's exact answer (c1
    keeps one) depends on its hash map's order of c1 and c2; the rule: one of them keeps two,
    the other one of its own, and c3 gets what was given up."""
    topics = ("t1", "t2")
    members = {
        "c1": Member(topics, (*tps("t1", 0), *tps("t2", 0)), 1),
        "c2": Member(topics, (*tps("t1", 1), *tps("t2", 1)), 1),
        "c3": Member(topics, (), 1),
    }
    result = settle(name, members, {"t1": 2, "t2": 2})
    assert sorted(len(result[m]) for m in ("c1", "c2")) == [1, 2]
    for m in ("c1", "c2"):
        assert set(result[m]) <= set(members[m].owned)
    assert len(result["c3"]) == 1


@pytest.mark.parametrize("name", STICKY)
def test_all_members_under_min_quota(name: str) -> None:
    """testAllConsumersAreUnderMinQuota."""
    topics = ("t1", "t2")
    members = {
        "c1": Member(topics, tuple(tps("t1", 0)), 1),
        "c2": Member(topics, tuple(tps("t1", 1)), 1),
        "c3": Member(topics, (), 1),
    }
    assert settle(name, members, {"t1": 2, "t2": 3}) == {
        "c1": tps("t1", 0) + tps("t2", 1),
        "c2": tps("t1", 1) + tps("t2", 2),
        "c3": tps("t2", 0),
    }


@pytest.mark.parametrize("name", STICKY)
def test_add_and_remove_a_member_of_one_topic(name: str) -> None:
    """testAddRemoveConsumerOneTopic."""
    counts = {"topic": 3}
    first = settle(name, same(("topic",), "c1"), counts)
    assert first == {"c1": tps("topic", 0, 1, 2)}
    members = owning(same(("topic",), "c1", "c2"), first)
    second = settle(name, members, counts)
    assert second == {"c1": tps("topic", 0, 1), "c2": tps("topic", 2)}
    third = settle(name, owning(same(("topic",), "c2"), second), counts)
    assert third == {"c2": tps("topic", 0, 1, 2)}


@pytest.mark.parametrize("name", STICKY)
def test_add_and_remove_two_members_of_two_topics(name: str) -> None:
    """testAddRemoveTwoConsumersTwoTopics."""
    topics, counts = ("t1", "t2"), {"t1": 3, "t2": 4}
    first = settle(name, same(topics, "c1", "c2"), counts)
    assert first == {"c1": tps("t1", 0, 2) + tps("t2", 1, 3), "c2": tps("t1", 1) + tps("t2", 0, 2)}
    second = settle(name, owning(same(topics, "c1", "c2", "c3", "c4"), first), counts)
    assert second == {
        "c1": tps("t1", 0, 2),
        "c2": tps("t1", 1) + tps("t2", 0),
        "c3": tps("t2", 1, 3),
        "c4": tps("t2", 2),
    }
    third = settle(name, owning(same(topics, "c3", "c4"), second), counts)
    assert third == {"c3": tps("t1", 0) + tps("t2", 0, 1, 3), "c4": tps("t1", 1, 2) + tps("t2", 2)}


@pytest.mark.parametrize("name", STICKY)
def test_all_members_reach_their_quota(name: str) -> None:
    """testAllConsumersReachExpectedQuotaAndAreConsideredFilled."""
    members = {
        "c1": Member(("topic",), tuple(tps("topic", 0, 1)), 1),
        "c2": Member(("topic",), tuple(tps("topic", 2)), 1),
        "c3": Member(("topic",), (), 1),
    }
    assert settle(name, members, {"topic": 4}) == {
        "c1": tps("topic", 0, 1),
        "c2": tps("topic", 2),
        "c3": tps("topic", 3),
    }


# --- Java's sticky cases: generations ---------------------------------------------------------


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("older", [9, -1])
def test_a_stale_claim_loses(name: str, older: int) -> None:
    """testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration (and ...WithNoGeneration)."""
    topics, claimed = ("topic", "topic2"), (*tps("topic", 0, 2), *tps("topic2", 1))
    members = {"c1": Member(topics, claimed, 10), "c2": Member(topics, claimed, older)}
    result = assign(name, members, {"topic": 3, "topic2": 3})
    assert result == {"c1": sorted(claimed), "c2": tps("topic", 1) + tps("topic2", 0, 2)}


@pytest.mark.parametrize("name", STICKY)
def test_claims_of_several_generations(name: str) -> None:
    """testOwnedPartitionsAreInvalidatedForConsumerWithMultipleGeneration."""
    topics = ("topic", "topic2")
    members = {
        "c1": Member(topics, (*tps("topic", 0, 1), *tps("topic2", 1)), 10),
        "c2": Member(topics, (*tps("topic", 0), *tps("topic2", 1, 2)), 8),
    }
    assert assign(name, members, {"topic": 3, "topic2": 3}) == {
        "c1": tps("topic", 0, 1) + tps("topic2", 1),
        "c2": tps("topic", 2) + tps("topic2", 0, 2),
    }


@pytest.mark.parametrize("name", STICKY)
def test_partitions_go_to_the_highest_generation(name: str) -> None:
    """testEnsurePartitionsAssignedToHighestGeneration."""
    topics, counts = ("topic", "topic2", "topic3"), {"topic": 3, "topic2": 3, "topic3": 3}
    members = {
        "c1": Member(topics, (*tps("topic", 0), *tps("topic2", 0), *tps("topic3", 0)), 10),
        "c2": Member(topics, (*tps("topic", 1), *tps("topic2", 1), *tps("topic3", 1)), 9),
        "c3": Member(topics, (*tps("topic2", 1), *tps("topic3", 0, 2)), 8),
    }
    assert settle(name, members, counts) == {
        "c1": tps("topic", 0) + tps("topic2", 0) + tps("topic3", 0),
        "c2": tps("topic", 1) + tps("topic2", 1) + tps("topic3", 1),
        "c3": tps("topic", 2) + tps("topic2", 2) + tps("topic3", 2),
    }


@pytest.mark.parametrize("name", STICKY)
def test_current_members_keep_what_they_own(name: str) -> None:
    """testNoReassignmentOnCurrentMembers: the newcomer gets exactly what nobody owns."""
    topics = ("topic", "topic1", "topic2", "topic3")
    members = {
        "c1": Member(topics, (), -1),
        "c2": Member(topics, (*tps("topic", 0), *tps("topic2", 0), *tps("topic1", 0)), 9),
        "c3": Member(topics, (*tps("topic3", 2), *tps("topic2", 2), *tps("topic1", 1)), 8),
        "c4": Member(topics, (*tps("topic3", 1), *tps("topic", 1, 2)), 7),
    }
    result = settle(name, members, dict.fromkeys(topics, 3))
    assert result["c1"] == tps("topic1", 2) + tps("topic2", 1) + tps("topic3", 0)


@pytest.mark.parametrize("owners", [3, 4])
def test_a_partition_claimed_twice_in_one_generation(owners: int) -> None:
    """testPartitionsTransferringOwnershipIncludeThePartitionClaimedByMultipleConsumersIn
    SameGeneration, and CooperativeStickyAssignorTest's testAllConsumersHaveOwnedPartition
    InvalidatedWhenClaimedByMultipleConsumersInSameGeneration (equal and unequal counts):
    neither claimer keeps it; cooperative-sticky gives it to no one while they may hold it."""
    members = {
        "c1": Member(("topic",), tuple(tps("topic", 0, 1)), 1),
        "c2": Member(("topic",), (*tps("topic", 0), *tps("topic", 2)), 1),
        "c3": Member(("topic",), (), 1),
    }
    counts = {"topic": owners}
    expected_c1 = tps("topic", 1) if owners == 3 else tps("topic", 1, 3)
    eager = assign("sticky", members, counts)
    assert eager == {"c1": expected_c1, "c2": tps("topic", 2), "c3": tps("topic", 0)}
    cooperative = assign("cooperative-sticky", members, counts)
    assert cooperative == {"c1": expected_c1, "c2": tps("topic", 2), "c3": []}
    settle("cooperative-sticky", members, counts)


@pytest.mark.parametrize("name", STICKY)
@pytest.mark.parametrize("generations", list(itertools.permutations([1, 2, 3])))
def test_one_partition_claimed_in_three_generations(
    name: str, generations: tuple[int, int, int]
) -> None:
    """testSubscriptionNotEqualAndAssignSamePartitionWith3Generation."""
    a, b, c = generations
    members = {
        "c1": Member(("topic",), tuple(tps("topic", 0, 2)), a),
        "c2": Member(("topic",), tuple(tps("topic", 1, 2, 3)), b),
        "c3": Member(("topic",), tuple(tps("topic", 2, 4, 5)), c),
        "c4": Member(("topic1",), tuple(tps("topic1", 0)), 2),
    }
    result = settle(name, members, {"topic": 6, "topic1": 1})
    assert all(1 <= len(v) <= 2 for v in result.values()), result


# --- Java's sticky cases: stickiness ----------------------------------------------------------


@pytest.mark.parametrize("name", STICKY)
def test_a_topic_added_then_removed(name: str) -> None:
    """testAddRemoveTopicTwoConsumers: members keep what they had as topics come and go."""
    counts = {"topic": 3}
    first = settle(name, same(("topic",), "c1", "c2"), counts)
    assert sorted(len(v) for v in first.values()) == [1, 2]
    counts["topic2"] = 3
    second = settle(name, owning(same(("topic", "topic2"), "c1", "c2"), first), counts)
    assert [len(v) for v in second.values()] == [3, 3]
    assert all(set(first[m]) <= set(second[m]) for m in first)
    del counts["topic"]
    third = settle(name, owning(same(("topic2",), "c1", "c2"), second), counts)
    assert sorted(len(v) for v in third.values()) == [1, 2]
    assert all(set(third[m]) <= set(second[m]) for m in third)


@pytest.mark.parametrize("name", STICKY)
def test_stickiness_when_the_leader_leaves(name: str) -> None:
    """testStickiness: four members, three partitions; c1 leaves and the others keep theirs."""
    first = settle(name, same(("t1",), "c1", "c2", "c3", "c4"), {"t1": 3})
    assert all(len(v) <= 1 for v in first.values())
    members = owning(same(("t1",), "c2", "c3", "c4"), first)
    second = settle(name, members, {"t1": 3})
    assert all(len(v) == 1 for v in second.values())
    assert all(set(first[m]) <= set(second[m]) for m in second)


def _canonical(prefix: str, i: int, most: int) -> str:
    return f"{prefix}{i:0{len(str(most))}d}"


@pytest.mark.parametrize("name", STICKY)
def test_reassignment_after_one_member_leaves(name: str) -> None:
    """testReassignmentAfterOneConsumerLeaves: topic i has i partitions, member i subscribes
    to topics 1..i; then member 10 leaves."""
    counts = {_canonical("t", i, 20): i for i in range(1, 20)}
    members = {
        _canonical("c", i, 20): Member(tuple(_canonical("t", j, 20) for j in range(1, i + 1)))
        for i in range(1, 20)
    }
    first = settle(name, members, counts)
    after = owning(members, first)
    del after["c10"]
    result = settle(name, after, counts)
    check_no_swaps(after, result)


@pytest.mark.parametrize("name", STICKY)
def test_reassignment_after_one_member_joins(name: str) -> None:
    """testReassignmentAfterOneConsumerAdded (with what the members own, which the Java test
    leaves out): the newcomer takes partitions, nobody else's change."""
    members = same(("topic",), *(_canonical("c", i, 10) for i in range(1, 10)))
    first = settle(name, members, {"topic": 20})
    after = owning(members, first)
    after["c10"] = Member(("topic",))
    result = settle(name, after, {"topic": 20})
    assert all(set(result[m]) <= set(first[m]) for m in first)


@pytest.mark.parametrize("name", STICKY)
def test_same_subscriptions_and_one_leaves(name: str) -> None:
    """testSameSubscriptions: fourteen topics, eight members; member 5 leaves and the others
    keep all they had."""
    counts = {_canonical("t", i, 15): i for i in range(1, 15)}
    members = same(tuple(counts), *(_canonical("c", i, 9) for i in range(1, 9)))
    first = settle(name, members, counts)
    after = owning(members, first)
    del after["c5"]
    result = settle(name, after, counts)
    assert all(set(first[m]) <= set(result[m]) for m in result)


@pytest.mark.parametrize("name", STICKY)
def test_poor_round_robin_scenario(name: str) -> None:
    """testPoorRoundRobinAssignmentScenario: what roundrobin leaves unbalanced."""
    counts = {f"topic{i}": i % 2 + 1 for i in range(1, 6)}
    members = {
        "c1": Member(tuple(counts)),
        "c2": Member(("topic1", "topic3", "topic5")),
        "c3": Member(("topic1", "topic3", "topic5")),
        "c4": Member(tuple(counts)),
    }
    result = settle(name, members, counts)
    assert sorted(len(v) for v in result.values()) == [2, 2, 2, 2]


@pytest.mark.parametrize("name", STICKY)
def test_a_new_subscription(name: str) -> None:
    """testNewSubscription: c0 subscribes to nothing, then to t1."""
    counts = {_canonical("t", i, 5): 1 for i in range(1, 5)}
    members = {
        _canonical("c", i, 3): Member(tuple(_canonical("t", j, 5) for j in range(i, 3 * i - 1)))
        for i in range(3)
    }
    first = settle(name, members, counts)
    after = owning(members, first)
    after["c0"] = Member(("t1",))
    result = settle(name, after, counts)
    check_no_swaps(after, result)


@pytest.mark.parametrize("name", STICKY)
def test_move_existing_assignments(name: str) -> None:
    """testMoveExistingAssignments: six one-partition topics, overlapping subscriptions."""
    members = {
        "c1": Member(("t1", "t2"), tuple(tps("t1", 0)), 1),
        "c2": Member(("t1", "t2", "t3", "t4"), (*tps("t2", 0), *tps("t3", 0)), 1),
        "c3": Member(
            ("t2", "t3", "t4", "t5", "t6"), (*tps("t4", 0), *tps("t5", 0), *tps("t6", 0)), 1
        ),
    }
    result = settle(name, members, {f"t{i}": 1 for i in range(1, 7)})
    check_no_swaps(members, result)


# --- hypothesis: random groups and changes ----------------------------------------------------

TOPICS = ("a", "b", "c", "d")


@st.composite
def groups(draw: st.DrawFn, *, alike: bool) -> tuple[dict[str, Member], dict[str, int]]:
    counts = {t: draw(st.integers(0, 6)) for t in TOPICS}
    names = draw(st.lists(st.sampled_from("mnopqrstuv"), min_size=1, max_size=6, unique=True))
    common = tuple(draw(st.lists(st.sampled_from(TOPICS), min_size=1, unique=True)))
    subscriptions = st.lists(st.sampled_from(TOPICS), min_size=1, unique=True).map(tuple)
    members = {n: Member(common if alike else draw(subscriptions)) for n in names}
    return members, counts


def change(
    draw: st.DrawFn, members: dict[str, Member], result: Assignment, *, alike: bool
) -> dict[str, Member]:
    """The next rebalance: members own what they got, some leave, some join."""
    after = owning(members, result)
    leaving = draw(st.sets(st.sampled_from(sorted(after))))
    if len(leaving) < len(after):
        for name in leaving:
            del after[name]
    topics = next(iter(after.values())).topics
    for name in draw(st.sets(st.sampled_from("ABCD"), max_size=3)):
        after[name] = Member(
            topics if alike else tuple(draw(st.sets(st.sampled_from(TOPICS), min_size=1)))
        )
    return after


@settings(max_examples=examples(150), deadline=None)
@given(data=st.data(), name=st.sampled_from(STICKY), alike=st.booleans())
def test_random_groups_and_changes(data: st.DataObject, name: str, alike: bool) -> None:
    """testReassignmentWithRandomSubscriptionsAndChanges and testLargeAssignmentWithMultiple
    ConsumersLeavingAndRandomSubscription, smaller: valid, balanced and without swaps after
    every change; with alike subscriptions, members that stay keep all they can; and a
    rebalance that changes nothing moves nothing."""
    members, counts = data.draw(groups(alike=alike))
    result = settle(name, members, counts)
    for _ in range(3):
        assert assign(name, owning(members, result), counts) == result
        after = change(data.draw, members, result, alike=alike)
        final = settle(name, after, counts)
        check_no_swaps(after, assign(name, after, counts))
        if alike:
            check_kept_what_quotas_allow(after, counts, assign(name, after, counts))
        members, result = after, final


def check_kept_what_quotas_allow(
    members: Mapping[str, Member], counts: Mapping[str, int], result: Assignment
) -> None:
    """With the same topics for all and disjoint, valid claims, the kept partitions are as
    many as the quotas allow: each member keeps up to ``floor`` of its own, and ``extra`` of
    those owning more than that keep one more."""
    topics = next(iter(members.values())).topics
    total = sum(counts.get(t, 0) for t in topics)
    floor, extra = divmod(total, len(members))
    owned = {m: {tp for tp in s.owned if tp.topic in topics} for m, s in members.items()}
    best = sum(min(len(o), floor) for o in owned.values())
    best += min(extra, sum(1 for o in owned.values() if len(o) > floor))
    kept = sum(len(owned[m] & set(result[m])) for m in members)
    assert kept == best, (kept, best, result)


@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_a_member_leaving_moves_only_its_partitions(data: st.DataObject) -> None:
    """With the same topics for all, when a member leaves a balanced group the others keep
    everything they had."""
    members, counts = data.draw(groups(alike=True))
    result = assign("sticky", members, counts)
    if len(members) < 2:
        return
    after = owning(members, result)
    del after[data.draw(st.sampled_from(sorted(after)))]
    final = assign("sticky", after, counts)
    assert all(set(result[m]) <= set(final[m]) for m in after)
