"""KIP-848 groups: ConsumerGroupHeartbeat and ConsumerGroupDescribe by Kafka's rules."""

from __future__ import annotations

import itertools

import pytest

from kafkawire.messages.consumer_group_describe import v1 as cgd

from .harness import Harness, consumer_heartbeat, join
from .kip848 import Member, assert_disjoint

UNKNOWN_MEMBER_ID = 25
INVALID_REQUEST = 42
GROUP_ID_NOT_FOUND = 69
FENCED_INSTANCE_ID = 82
FENCED_MEMBER_EPOCH = 110
UNRELEASED_INSTANCE_ID = 111
UNSUPPORTED_ASSIGNOR = 112
INVALID_REGULAR_EXPRESSION = 128
INCONSISTENT_GROUP_PROTOCOL = 23


async def _converge(h: Harness, members: list[Member], rounds: int = 6) -> None:
    """Every member heartbeats in turn until nothing moves; no partition is ever owned by two
    members on the way."""
    for _ in range(rounds):
        for m in members:
            answer = await m.beat(h)
            assert answer.error_code == 0, answer
            assert_disjoint(members)


async def test_a_member_joins_and_gets_every_partition() -> None:
    h = Harness({"t": 4})
    m = Member("m1")
    answer = await m.beat(h)

    assert (answer.member_id, answer.member_epoch, answer.heartbeat_interval_ms) == ("m1", 1, 5000)
    assert m.partitions() == {0, 1, 2, 3}
    # A heartbeat with nothing new carries no assignment.
    assert (await m.beat(h)).assignment is None


async def test_three_members_join_and_leave_and_no_partition_is_ever_owned_twice() -> None:
    h = Harness({"t": 6})
    a, b, c = Member("a"), Member("b"), Member("c")
    await a.beat(h)
    assert a.partitions() == set(range(6))

    await b.beat(h)  # b joins: a must first give up half
    assert b.partitions() == set()  # a still owns them
    await _converge(h, [a, b])
    assert (len(a.partitions()), len(b.partitions())) == (3, 3)

    await c.beat(h)
    await _converge(h, [a, b, c])
    assert sorted(len(m.partitions()) for m in (a, b, c)) == [2, 2, 2]
    epochs = {m.epoch for m in (a, b, c)}
    assert len(epochs) == 1

    assert (await b.leave(h)).member_epoch == -1
    await _converge(h, [a, c])
    assert a.partitions() | c.partitions() == set(range(6))
    assert sorted(len(m.partitions()) for m in (a, c)) == [3, 3]
    assert a.epoch > epochs.pop()


@pytest.mark.parametrize("order", list(itertools.permutations("abc")))
async def test_any_heartbeat_order_keeps_ownership_exclusive(order: tuple[str, ...]) -> None:
    h = Harness({"t": 5, "u": 2})
    members = {n: Member(n, topics=("t", "u")) for n in "abc"}
    for name in order:  # join one by one, each followed by a round in this order
        await members[name].beat(h)
        await _converge(h, [members[n] for n in order], rounds=2)
    await _converge(h, list(members.values()))
    owned = [m.owned for m in members.values()]
    assert sum(len(o) for o in owned) == 7
    assert sorted(len(o) for o in owned) == [2, 2, 3]


async def test_the_range_assignor_gives_contiguous_ranges_in_member_order() -> None:
    h = Harness({"t": 4})
    members = [Member(n, assignor="range") for n in ("m1", "m2", "m3")]
    for m in members:
        await m.beat(h)
    await _converge(h, members)
    assert [sorted(m.partitions()) for m in members] == [[0, 1], [2], [3]]


async def test_a_member_must_revoke_before_its_partitions_move_and_times_out_if_it_does_not() -> (
    None
):
    h = Harness({"t": 2})
    a, b = Member("a"), Member("b")
    await a.beat(h)
    await b.beat(h)
    answer = await h.send(consumer_heartbeat("a", a.epoch, owned={h.view.topic_id("t"): [0, 1]}))
    assert answer.member_epoch == a.epoch  # still at its epoch: it must revoke first
    assert len(answer.assignment.topic_partitions[0].partitions) == 1

    h.advance(29)  # a keeps reporting both partitions: b waits
    stuck = await h.send(consumer_heartbeat("a", a.epoch, owned={h.view.topic_id("t"): [0, 1]}))
    assert stuck.error_code == 0
    assert (await b.beat(h)).assignment is None or b.partitions() == set()
    h.advance(1)  # the rebalance timeout (30 s) runs out: a is fenced
    gone = await h.send(consumer_heartbeat("a", a.epoch, owned={h.view.topic_id("t"): [0, 1]}))
    assert gone.error_code == UNKNOWN_MEMBER_ID
    await b.beat(h)
    assert b.partitions() == {0, 1}


async def test_a_silent_member_is_fenced_when_its_session_expires() -> None:
    h = Harness({"t": 2}, consumer_group_session_timeout_ms=10_000)
    a, b = Member("a"), Member("b")
    await a.beat(h)
    await b.beat(h)
    await _converge(h, [a, b])
    for _ in range(3):
        h.advance(4)
        await a.beat(h)  # only a heartbeats
    assert a.partitions() == {0, 1}
    assert (await b.beat(h)).error_code == UNKNOWN_MEMBER_ID


async def test_epochs_other_than_the_current_one_are_fenced() -> None:
    h = Harness({"t": 2})
    a, b = Member("a"), Member("b")
    await a.beat(h)
    await b.beat(h)
    await _converge(h, [a, b])
    topic = h.view.topic_id("t")
    epoch = a.epoch

    ahead = await h.send(consumer_heartbeat("a", epoch + 1, owned={}))
    assert ahead.error_code == FENCED_MEMBER_EPOCH
    assert "greater member epoch" in ahead.error_message
    # An older epoch owning what is not its own is fenced.
    behind = await h.send(consumer_heartbeat("a", epoch - 1, owned={topic: [0, 1]}))
    assert behind.error_code == FENCED_MEMBER_EPOCH
    assert "smaller member epoch" in behind.error_message
    # The previous epoch with owned partitions within the assignment: the answer that moved
    # it on was lost; it is told the current epoch again.
    previous = await h.send(
        consumer_heartbeat("a", epoch - 1, owned={topic: sorted(a.partitions())})
    )
    assert (previous.error_code, previous.member_epoch) == (0, epoch)
    # A fenced member rejoins with epoch 0 and the same id (KAFKA-19233).
    rejoined = await h.send(consumer_heartbeat("a", 0, topics=["t"]))
    assert (rejoined.error_code, rejoined.member_epoch) == (0, epoch)


async def test_heartbeats_are_validated_as_kafka_validates_them() -> None:
    h = Harness({"t": 2})
    cases = [
        (consumer_heartbeat("", 0, topics=["t"]), INVALID_REQUEST, "MemberId can't be empty."),
        (consumer_heartbeat("m", 0, topics=["t"], group=""), INVALID_REQUEST, None),
        (consumer_heartbeat("m", 0, topics=["t"], instance=""), INVALID_REQUEST, None),
        (consumer_heartbeat("m", 0, topics=None), INVALID_REQUEST, None),
        (consumer_heartbeat("m", 0, topics=["t"], owned={h.view.topic_id("t"): [0]}),
         INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining."),
        (consumer_heartbeat("m", -2), INVALID_REQUEST, "InstanceId can't be null."),
        (consumer_heartbeat("m", -3), INVALID_REQUEST, "MemberEpoch is invalid."),
        (consumer_heartbeat("m", 0, topics=["t"], assignor="sticky"), UNSUPPORTED_ASSIGNOR, None),
        (consumer_heartbeat("m", 0, regex="t[", topics=None), INVALID_REGULAR_EXPRESSION, None),
        (consumer_heartbeat("m", 3), GROUP_ID_NOT_FOUND, None),
    ]  # fmt: skip
    for request, code, message in cases:
        answer = await h.send(request)
        assert answer.error_code == code, request
        if message:
            assert answer.error_message == message
    await Member("a").beat(h)
    assert (await h.send(consumer_heartbeat("ghost", 3))).error_code == UNKNOWN_MEMBER_ID


async def test_at_v0_the_coordinator_makes_the_member_id() -> None:
    h = Harness({"t": 1})
    answer = await h.send(consumer_heartbeat("", 0, topics=["t"], version=0))
    assert answer.error_code == 0
    assert answer.member_id
    # From epoch 1, v0 needs the id too.
    missing = await h.send(consumer_heartbeat("", 1, version=0))
    assert missing.error_code == INVALID_REQUEST


async def test_a_static_member_keeps_its_place_across_a_restart() -> None:
    h = Harness({"t": 4})
    a, b = Member("a", instance="ia"), Member("b", instance="ib")
    await a.beat(h)
    await b.beat(h)
    await _converge(h, [a, b])
    before = (a.epoch, sorted(a.partitions()), sorted(b.partitions()))

    left = await a.leave(h, epoch=-2)
    assert left.member_epoch == -2
    await b.beat(h)  # nothing moves while a is away
    assert (b.last.assignment, b.epoch) == (None, before[0])

    # A new instance of ia (new member id) gets the same partitions, at the same epoch.
    restarted = Member("a2", instance="ia")
    await restarted.beat(h)
    assert (restarted.epoch, sorted(restarted.partitions())) == before[:2]
    # The old id is fenced; a second live instance of ia is refused.
    stale = await h.send(consumer_heartbeat("a", before[0], instance="ia", owned={}))
    assert stale.error_code == FENCED_INSTANCE_ID
    twin = await h.send(consumer_heartbeat("a3", 0, topics=["t"], instance="ia"))
    assert twin.error_code == UNRELEASED_INSTANCE_ID


async def test_a_static_member_that_does_not_come_back_loses_its_partitions() -> None:
    h = Harness({"t": 2}, consumer_group_session_timeout_ms=10_000)
    a, b = Member("a", instance="ia"), Member("b")
    await a.beat(h)
    await b.beat(h)
    await _converge(h, [a, b])
    await a.leave(h, epoch=-2)
    for _ in range(3):
        h.advance(4)
        await b.beat(h)
    assert b.partitions() == {0, 1}


async def test_a_regular_expression_follows_the_topics_that_appear() -> None:
    h = Harness({"orders-1": 1, "other": 1})
    m = Member("m", topics=())
    answer = await m.beat(h, regex=r"orders-\d+")
    assert {t.topic_id for t in answer.assignment.topic_partitions} == {h.view.topic_id("orders-1")}

    h.view.partitions["orders-2"] = 2  # a matching topic is created
    epoch = m.epoch
    await m.beat(h)
    assert m.epoch == epoch + 1
    assert len(m.owned) == 3


async def test_a_subscription_change_revokes_the_topics_dropped() -> None:
    h = Harness({"t": 1, "u": 1})
    m = Member("m", topics=("t", "u"))
    await m.beat(h)
    assert len(m.owned) == 2
    answer = await m.beat(h, topics=["u"])
    assert [t.topic_id for t in answer.assignment.topic_partitions] == [h.view.topic_id("u")]


async def test_classic_and_kip848_joins_to_each_others_groups() -> None:
    h = Harness({"t": 1})
    await Member("m").beat(h)
    assert (await h.send(join())).error_code == INCONSISTENT_GROUP_PROTOCOL
    await Member("m").leave(h)
    # The group is now empty: a classic member takes it over, and the other way round.
    assert (await h.send(join(version=3))).error_code == 0
    refused = await h.send(consumer_heartbeat("n", 0, topics=["t"]))
    assert refused.error_code == GROUP_ID_NOT_FOUND


async def test_consumer_group_describe() -> None:
    h = Harness({"t": 2})
    a = Member("a", instance="ia", assignor="range")
    await a.beat(h)
    answer = await h.send(cgd.ConsumerGroupDescribeRequest(group_ids=("g", "nope", "")))

    described, missing, invalid = answer.groups
    assert (described.group_state, described.group_epoch, described.assignment_epoch) == (
        "Stable",
        1,
        1,
    )
    assert described.assignor_name == "range"
    (member,) = described.members
    assert (member.member_id, member.instance_id, member.member_epoch) == ("a", "ia", 1)
    assert member.subscribed_topic_names == ("t",)
    assert member.assignment.topic_partitions[0].topic_name == "t"
    assert member.assignment == member.target_assignment
    assert member.member_type == 1
    assert (missing.error_code, missing.error_message) == (
        GROUP_ID_NOT_FOUND,
        "Group nope not found.",
    )
    assert invalid.error_code == 24
    v0 = await h.send(
        cgd.ConsumerGroupDescribeRequest(group_ids=("g",)).__class__(group_ids=("g",))
    )
    assert v0.groups[0].members[0].member_id == "a"
