"""The assignors on their own: Java's results for range and roundrobin, balance and
stickiness for sticky, and the held-back moves of cooperative-sticky."""

from __future__ import annotations

import itertools

import pytest

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.assignors import Member, assign


def tps(topic: str, *partitions: int) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for p in partitions]


def test_range_splits_each_topic_in_contiguous_ranges() -> None:
    members = {"a": Member(("t", "u")), "b": Member(("t", "u"))}
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


@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky"])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_every_partition_once_and_balanced(name: str, count: int) -> None:
    members = {f"m{i}": Member(("t",)) for i in range(count)}
    result = assign(name, members, {"t": 7})
    everything = sorted(itertools.chain.from_iterable(result.values()))
    assert everything == tps("t", *range(7))
    sizes = [len(v) for v in result.values()]
    assert max(sizes) - min(sizes) <= 1


def test_sticky_moves_only_what_balance_needs() -> None:
    before = {"a": tps("t", 0, 1, 2), "b": tps("t", 3, 4, 5)}
    members = {m: Member(("t",), tuple(owned)) for m, owned in before.items()}
    members["c"] = Member(("t",))
    after = assign("sticky", members, {"t": 6})
    assert sorted(len(v) for v in after.values()) == [2, 2, 2]
    for m in ("a", "b"):
        assert set(after[m]) <= set(before[m])  # they only gave partitions away


def test_cooperative_sticky_holds_back_partitions_that_change_owner() -> None:
    members = {
        "a": Member(("t",), tuple(tps("t", 0, 1, 2))),
        "b": Member(("t",), tuple(tps("t", 3, 4, 5))),
        "c": Member(("t",)),
    }
    first = assign("cooperative-sticky", members, {"t": 6})
    assert first["c"] == []  # nothing changes owner in the first round
    assert len(first["a"]) == len(first["b"]) == 2
    second_members = {m: Member(("t",), tuple(first[m])) for m in members}
    second = assign("cooperative-sticky", second_members, {"t": 6})
    assert sorted(len(v) for v in second.values()) == [2, 2, 2]
    assert second["a"] == first["a"]
    assert second["b"] == first["b"]
