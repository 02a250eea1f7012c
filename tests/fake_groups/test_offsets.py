"""Committed offsets: OffsetCommit, OffsetFetch and OffsetDelete at every version, checked
against classic generations and KIP-848 member epochs, and the offsets of transactions."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.messages.offset_commit import v10 as commit10
from kafkawire.messages.offset_delete import v0 as offset_delete
from kafkawire.messages.offset_fetch import v9 as fetch9
from kafkawire.messages.offset_fetch import v10 as fetch10

from .classic import form_group, member_id, rebalance
from .harness import Harness, commit, fetch, join, sync
from .kip848 import Member

NOT_COORDINATOR = 16
UNKNOWN_TOPIC_OR_PARTITION = 3
OFFSET_METADATA_TOO_LARGE = 12
ILLEGAL_GENERATION = 22
UNKNOWN_MEMBER_ID = 25
REBALANCE_IN_PROGRESS = 27
UNSUPPORTED_VERSION = 35
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
FENCED_INSTANCE_ID = 82
GROUP_SUBSCRIBED_TO_TOPIC = 86
UNKNOWN_TOPIC_ID = 100
STALE_MEMBER_EPOCH = 113


def codes(answer: Any) -> dict[tuple[str, int], int]:
    return {(t.name, p.partition_index): p.error_code for t in answer.topics for p in t.partitions}


def fetched(answer: Any) -> dict[tuple[str, int], tuple[int, int, str | None]]:
    topics = answer.groups[0].topics if hasattr(answer, "groups") else answer.topics
    return {
        (t.name, p.partition_index): (
            p.committed_offset,
            getattr(p, "committed_leader_epoch", -1),
            p.metadata,
        )
        for t in topics
        for p in t.partitions
    }


@pytest.mark.parametrize("version", range(10))
async def test_a_simple_consumer_commits_and_fetches_at_every_version(version: int) -> None:
    h = Harness({"t": 2})
    answer = await h.send(
        commit({("t", 0): 42, ("t", 1): 7}, version=version, leader_epoch=3, metadata="m")
    )
    assert codes(answer) == {("t", 0): 0, ("t", 1): 0}

    got = fetched(await h.send(fetch([("t", 0), ("t", 1), ("t", 5)], version=version)))

    epoch = 3 if version >= 6 else -1  # sent from v6, answered from v5
    shown = epoch if version >= 5 else -1
    assert got == {("t", 0): (42, shown, "m"), ("t", 1): (7, shown, "m"), ("t", 5): (-1, -1, "")}


async def test_by_topic_id_from_v10() -> None:
    h = Harness({"t": 2})
    topic_id = h.view.topic_id("t")
    unknown = h.view.topic_id("t").__class__(int=99)
    request = commit10.OffsetCommitRequest(
        group_id="g",
        topics=(
            commit10.OffsetCommitRequestTopic(
                topic_id=topic_id,
                partitions=(
                    commit10.OffsetCommitRequestPartition(partition_index=1, committed_offset=5),
                ),
            ),
            commit10.OffsetCommitRequestTopic(
                topic_id=unknown,
                partitions=(
                    commit10.OffsetCommitRequestPartition(partition_index=0, committed_offset=5),
                ),
            ),
        ),
    )
    answer = await h.send(request)
    assert [(t.topic_id, t.partitions[0].error_code) for t in answer.topics] == [
        (topic_id, 0),
        (unknown, UNKNOWN_TOPIC_ID),
    ]
    asked = fetch10.OffsetFetchRequest(
        groups=(
            fetch10.OffsetFetchRequestGroup(
                group_id="g",
                topics=(
                    fetch10.OffsetFetchRequestTopics(topic_id=topic_id, partition_indexes=(1,)),
                    fetch10.OffsetFetchRequestTopics(topic_id=unknown, partition_indexes=(0,)),
                ),
            ),
        )
    )
    got = (await h.send(asked)).groups[0].topics
    assert [
        (t.topic_id, t.partitions[0].committed_offset, t.partitions[0].error_code) for t in got
    ] == [
        (topic_id, 5, 0),
        (unknown, -1, UNKNOWN_TOPIC_ID),
    ]
    everything = await h.send(
        fetch10.OffsetFetchRequest(
            groups=(fetch10.OffsetFetchRequestGroup(group_id="g", topics=None),)
        )
    )
    assert [t.topic_id for t in everything.groups[0].topics] == [topic_id]


async def test_commits_to_unknown_topics_and_partitions_and_oversized_metadata_fail_alone() -> None:
    h = Harness({"t": 2})
    answer = await h.send(commit({("t", 0): 1, ("t", 9): 1, ("nope", 0): 1}))
    assert codes(answer) == {
        ("t", 0): 0,
        ("t", 9): UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): UNKNOWN_TOPIC_OR_PARTITION,
    }
    big = await h.send(commit({("t", 1): 1}, metadata="x" * 4097))
    assert codes(big) == {("t", 1): OFFSET_METADATA_TOO_LARGE}


async def test_classic_commits_are_checked_against_member_and_generation() -> None:
    h = Harness({"t": 2}, group_initial_rebalance_delay_ms=3000)
    (a, b), generation, _ = await form_group(h, 2, session_ms=60_000)

    def ok(answer: Any) -> int:
        return int(codes(answer)[("t", 0)])

    assert ok(await h.send(commit({("t", 0): 1}, generation=generation, member_id=a))) == 0
    assert ok(await h.send(commit({("t", 0): 1}, generation=generation - 1, member_id=a))) == (
        ILLEGAL_GENERATION
    )
    assert ok(await h.send(commit({("t", 0): 1}, generation=generation, member_id="x"))) == (
        UNKNOWN_MEMBER_ID
    )
    # A group with members refuses commits without a generation (simple consumers).
    assert ok(await h.send(commit({("t", 0): 1}))) == UNKNOWN_MEMBER_ID
    # While a rebalance is prepared, the old generation still commits; once it completes
    # and the assignment is awaited, commits wait for it: REBALANCE_IN_PROGRESS.
    c = await member_id(h, client_id="c9", session_ms=60_000)
    newcomer = h.start(join(c, session_ms=60_000))
    await h.settle()
    assert ok(await h.send(commit({("t", 0): 2}, generation=generation, member_id=a))) == 0
    answers = await rebalance(h, [a, b], session_ms=60_000, max_seconds=0)
    await newcomer
    assert (
        ok(await h.send(commit({("t", 0): 3}, generation=generation + 1, member_id=a)))
        == REBALANCE_IN_PROGRESS
    )
    leader = answers[a].leader
    assert (await h.send(sync(leader, generation + 1, {}))).error_code == 0
    assert ok(await h.send(commit({("t", 0): 3}, generation=generation + 1, member_id=a))) == 0


@pytest.mark.parametrize(("version", "code"), [(8, ILLEGAL_GENERATION), (9, GROUP_ID_NOT_FOUND)])
async def test_a_generation_for_a_group_that_does_not_exist(version: int, code: int) -> None:
    h = Harness({"t": 1})
    answer = await h.send(commit({("t", 0): 1}, version=version, generation=3, member_id="m"))
    assert codes(answer) == {("t", 0): code}


async def test_a_static_members_commit_with_another_member_id_is_fenced() -> None:
    h = Harness({"t": 1})
    task = h.start(join(instance="i"))
    await h.settle()
    joined = task.result()
    answer = await h.send(
        commit({("t", 0): 1}, generation=joined.generation_id, member_id="other", instance="i")
    )
    assert codes(answer) == {("t", 0): FENCED_INSTANCE_ID}


async def test_kip848_commits_and_fetches_carry_the_member_epoch() -> None:
    h = Harness({"t": 2})
    m = Member("m")
    await m.beat(h)
    epoch = m.epoch

    def ok(answer: Any) -> int:
        return int(codes(answer)[("t", 0)])

    assert ok(await h.send(commit({("t", 0): 9}, generation=epoch, member_id="m"))) == 0
    assert ok(await h.send(commit({("t", 0): 9}, generation=epoch - 1, member_id="m"))) == (
        STALE_MEMBER_EPOCH
    )
    assert ok(await h.send(commit({("t", 0): 9}, generation=epoch, member_id="x"))) == (
        UNKNOWN_MEMBER_ID
    )
    assert (
        ok(await h.send(commit({("t", 0): 9}, version=8, generation=epoch, member_id="m")))
        == UNSUPPORTED_VERSION
    )

    mine = await h.send(fetch([("t", 0)], member_id="m", member_epoch=epoch))
    assert fetched(mine) == {("t", 0): (9, -1, "")}
    stale = await h.send(fetch([("t", 0)], member_id="m", member_epoch=epoch + 1))
    assert stale.groups[0].error_code == STALE_MEMBER_EPOCH
    unknown = await h.send(fetch([("t", 0)], member_id="x", member_epoch=epoch))
    assert unknown.groups[0].error_code == UNKNOWN_MEMBER_ID
    admin = await h.send(fetch(None))
    assert fetched(admin) == {("t", 0): (9, -1, "")}


async def test_an_empty_group_takes_commits_without_a_generation() -> None:
    h = Harness({"t": 1})
    m = Member("m")
    await m.beat(h)
    await m.leave(h)
    assert codes(await h.send(commit({("t", 0): 4}))) == {("t", 0): 0}


async def test_offset_fetch_batches_groups_and_answers_each() -> None:
    h = Harness({"t": 1})
    h.view.coordinators["elsewhere"] = 2
    await h.send(commit({("t", 0): 1}, group="a"))
    request = fetch9.OffsetFetchRequest(
        groups=(
            fetch9.OffsetFetchRequestGroup(group_id="a", topics=None),
            fetch9.OffsetFetchRequestGroup(group_id="missing", topics=None),
            fetch9.OffsetFetchRequestGroup(group_id="elsewhere", topics=None),
        )
    )
    answer = await h.send(request)
    assert [(g.group_id, g.error_code, len(g.topics)) for g in answer.groups] == [
        ("a", 0, 1),
        ("missing", 0, 0),
        ("elsewhere", NOT_COORDINATOR, 0),
    ]
    old = await h.send(fetch([("t", 0)], version=3, group="elsewhere"))
    assert old.error_code == NOT_COORDINATOR
    first = await h.send(fetch([("t", 0)], version=1, group="elsewhere"))
    assert first.topics[0].partitions[0].error_code == NOT_COORDINATOR
    refused = await h.send(commit({("t", 0): 1}, group="elsewhere"))
    assert codes(refused) == {("t", 0): NOT_COORDINATOR}


async def test_offset_delete() -> None:
    h = Harness({"t": 1, "u": 1}, group_initial_rebalance_delay_ms=3000)

    def delete(*topics: str, group: str = "g") -> offset_delete.OffsetDeleteRequest:
        return offset_delete.OffsetDeleteRequest(
            group_id=group,
            topics=tuple(
                offset_delete.OffsetDeleteRequestTopic(
                    name=t,
                    partitions=(offset_delete.OffsetDeleteRequestPartition(partition_index=0),),
                )
                for t in topics
            ),
        )

    assert (await h.send(delete("t", group="nope"))).error_code == GROUP_ID_NOT_FOUND
    (a,), generation, _ = await form_group(h, 1)  # subscribes to "t"
    await h.send(commit({("t", 0): 1, ("u", 0): 1}, generation=generation, member_id=a))

    answer = await h.send(delete("t", "u", "nope"))

    assert answer.error_code == 0
    assert {t.name: t.partitions[0].error_code for t in answer.topics} == {
        "t": GROUP_SUBSCRIBED_TO_TOPIC,
        "u": 0,
        "nope": UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert fetched(await h.send(fetch([("t", 0), ("u", 0)]))) == {
        ("t", 0): (1, -1, ""),
        ("u", 0): (-1, -1, ""),
    }
    # A group in use with another protocol type refuses it all.
    other = h.start(join(group="connect", protocol_type="connect", version=3))
    await h.settle()
    h.advance(3)
    await h.settle()
    assert other.result().error_code == 0
    assert (await h.send(delete("t", group="connect"))).error_code == NON_EMPTY_GROUP


async def test_transactional_offsets_are_stored_when_the_transaction_commits() -> None:
    h = Harness({"t": 2})
    assert h.coordinator.validate_txn_offset_commit("g", "", None, -1) == 0
    assert h.coordinator.validate_txn_offset_commit("g", "m", None, 3) == ILLEGAL_GENERATION

    h.coordinator.commit_offsets("g", {("t", 0): (10, 4, "txn"), ("t", 1): (11, 4, None)})

    assert fetched(await h.send(fetch([("t", 0), ("t", 1)]))) == {
        ("t", 0): (10, 4, "txn"),
        ("t", 1): (11, 4, None),
    }
    m = Member("m", topics=("t",))
    await h.send(commit({("t", 0): 1}, group="k"))
    assert h.coordinator.validate_txn_offset_commit("k", "", None, -1) == 0
    await m.beat(h)
    assert h.coordinator.validate_txn_offset_commit("g2", "", None, -1) == 0
