"""Share groups in the group coordinator, without sockets, on a hand-driven clock: joining and
leaving, the simple assignor, fencing, session expiry, describing, listing, deleting, and the
share-group offset APIs."""

from __future__ import annotations

import uuid
from typing import Any

from kafkawire.errors import (
    FencedMemberEpochError,
    GroupIdNotFoundError,
    GroupMaxSizeReachedError,
    InconsistentGroupProtocolError,
    InvalidRequestError,
    NonEmptyGroupError,
    UnknownMemberIdError,
    UnknownTopicOrPartitionError,
)
from kafkawire.messages.alter_share_group_offsets import v0 as alter
from kafkawire.messages.delete_groups import v2 as delete_groups
from kafkawire.messages.delete_share_group_offsets import v0 as delete
from kafkawire.messages.describe_share_group_offsets import v0 as describe_v0
from kafkawire.messages.describe_share_group_offsets import v1 as describe
from kafkawire.messages.list_groups import v5 as list_groups
from kafkawire.messages.share_group_describe import v1 as sgd
from kafkawire.testing.fake.view import ShareStartOffset
from tests.fake_groups.harness import Harness, consumer_heartbeat, join

from .share import GROUP, heartbeat


def assigned(answer: Any, harness: Harness) -> dict[str, list[int]]:
    names = {harness.view.topic_id(n): n for n in harness.view.partitions}
    assert answer.assignment is not None
    return {names[t.topic_id]: list(t.partitions) for t in answer.assignment.topic_partitions}


async def test_a_member_joins_with_its_own_id_and_gets_every_partition() -> None:
    harness = Harness({"t": 3})
    answer = await harness.send(heartbeat("m1", 0))
    assert (answer.error_code, answer.member_id, answer.member_epoch) == (0, "m1", 1)
    assert answer.heartbeat_interval_ms == 5000
    assert assigned(answer, harness) == {"t": [0, 1, 2]}
    quiet = await harness.send(heartbeat("m1", 1, topics=None))
    assert (quiet.member_epoch, quiet.assignment) == (1, None)


async def test_the_simple_assignor_shares_partitions_when_members_outnumber_them() -> None:
    harness = Harness({"t": 2})
    for member in ("a", "b", "c"):
        await harness.send(heartbeat(member, 0))
    answers = {m: await harness.send(heartbeat(m, 0)) for m in ("a", "b", "c")}
    counts = sorted(len(assigned(a, harness)["t"]) for a in answers.values())
    assert counts == [1, 1, 2]  # each of the 2 partitions goes to 2 of the 3 members
    holders = [sum(p in assigned(a, harness)["t"] for a in answers.values()) for p in (0, 1)]
    assert holders == [2, 2]


async def test_members_split_partitions_when_there_are_enough_of_them() -> None:
    harness = Harness({"t": 4})
    first = await harness.send(heartbeat("a", 0))
    assert assigned(first, harness) == {"t": [0, 1, 2, 3]}
    second = await harness.send(heartbeat("b", 0))
    assert second.member_epoch == 2
    moved = await harness.send(heartbeat("a", 1, topics=None))
    assert moved.member_epoch == 2
    mine, theirs = assigned(moved, harness)["t"], assigned(second, harness)["t"]
    assert (len(mine), len(theirs), sorted(mine + theirs)) == (2, 2, [0, 1, 2, 3])


async def test_a_member_leaves_with_epoch_minus_one() -> None:
    harness = Harness()
    await harness.send(heartbeat("a", 0))
    await harness.send(heartbeat("b", 0))
    gone = await harness.send(heartbeat("a", -1, topics=None))
    assert (gone.error_code, gone.member_epoch) == (0, -1)
    again = await harness.send(heartbeat("a", -1, topics=None))
    assert again.error_code == UnknownMemberIdError.code
    stays = await harness.send(heartbeat("b", 2, topics=None))
    assert (stays.member_epoch, assigned(stays, harness)) == (3, {"t": [0, 1, 2, 3]})


async def test_wrong_epochs_unknown_members_and_bad_requests_are_refused() -> None:
    harness = Harness()
    await harness.send(heartbeat("a", 0))
    assert (await harness.send(heartbeat("a", 5))).error_code == FencedMemberEpochError.code
    assert (await harness.send(heartbeat("nobody", 1))).error_code == UnknownMemberIdError.code
    for bad in (heartbeat("", 0), heartbeat("a", 0, topics=None), heartbeat("a", -3)):
        assert (await harness.send(bad)).error_code == InvalidRequestError.code
    rejoined = await harness.send(heartbeat("a", 0))
    assert (rejoined.error_code, rejoined.member_epoch) == (0, 1)


async def test_a_silent_member_is_removed_after_the_session_timeout() -> None:
    harness = Harness()
    await harness.send(heartbeat("a", 0))
    await harness.send(heartbeat("b", 0))
    harness.advance(30)
    await harness.send(heartbeat("b", 2, topics=None))
    harness.advance(20)  # a: 50 s silent; b: 20 s
    assert (await harness.send(heartbeat("a", 2, topics=None))).error_code == (
        UnknownMemberIdError.code
    )
    described = await harness.send(sgd.ShareGroupDescribeRequest(group_ids=(GROUP,)))
    assert [m.member_id for m in described.groups[0].members] == ["b"]


async def test_a_topic_that_appears_later_is_assigned() -> None:
    harness = Harness({"t": 1})
    await harness.send(heartbeat("a", 0, topics=("t", "later")))
    harness.view.partitions["later"] = 2
    answer = await harness.send(heartbeat("a", 1, topics=None))
    assert (answer.member_epoch, assigned(answer, harness)) == (2, {"t": [0], "later": [0, 1]})


async def test_the_group_size_is_capped() -> None:
    harness = Harness(share_group_max_size=1)
    await harness.send(heartbeat("a", 0))
    assert (await harness.send(heartbeat("b", 0))).error_code == GroupMaxSizeReachedError.code


async def test_a_share_group_id_belongs_to_share_groups_alone() -> None:
    harness = Harness()
    await harness.send(heartbeat("a", 0))
    kip848 = await harness.send(consumer_heartbeat("c", 0, topics=["t"], group=GROUP))
    assert kip848.error_code == GroupIdNotFoundError.code
    classic = await harness.send(join(group=GROUP, member_id=""))
    assert classic.error_code == InconsistentGroupProtocolError.code
    await harness.send(consumer_heartbeat("c", 0, topics=["t"], group="consumers"))
    other = await harness.send(heartbeat("a", 0, group="consumers"))
    assert other.error_code == GroupIdNotFoundError.code


async def test_describe_list_and_delete_share_groups() -> None:
    harness = Harness({"t": 2})
    await harness.send(heartbeat("a", 0))
    described = await harness.send(sgd.ShareGroupDescribeRequest(group_ids=(GROUP, "none")))
    mine, missing = described.groups
    assert (mine.group_state, mine.group_epoch, mine.assignment_epoch, mine.assignor_name) == (
        "Stable",
        1,
        1,
        "simple",
    )
    (member,) = mine.members
    assert (member.member_id, member.subscribed_topic_names) == ("a", ("t",))
    assert [(t.topic_name, t.partitions) for t in member.assignment.topic_partitions] == [
        ("t", (0, 1))
    ]
    assert missing.error_code == GroupIdNotFoundError.code
    listed = await harness.send(list_groups.ListGroupsRequest(types_filter=("share",)))
    assert [(g.group_id, g.group_type, g.protocol_type, g.group_state) for g in listed.groups] == [
        (GROUP, "share", "share", "Stable")
    ]
    refused = await harness.send(delete_groups.DeleteGroupsRequest(groups_names=(GROUP,)))
    assert refused.results[0].error_code == NonEmptyGroupError.code
    await harness.send(heartbeat("a", -1, topics=None))
    harness.shares.set_share_start_offsets(GROUP, {(harness.view.topic_id("t"), 0): 5})
    deleted = await harness.send(delete_groups.DeleteGroupsRequest(groups_names=(GROUP,)))
    assert deleted.results[0].error_code == 0
    assert harness.shares.share_start_offsets(GROUP) == {}


async def test_start_offsets_are_described_altered_and_deleted() -> None:
    harness = Harness({"t": 2})
    topic = harness.view.topic_id("t")
    harness.shares.offsets[GROUP] = {(topic, 0): ShareStartOffset(7, 3, 2)}
    await harness.send(heartbeat("a", 0))
    every = describe.DescribeShareGroupOffsetsRequest(
        groups=(describe.DescribeShareGroupOffsetsRequestGroup(group_id=GROUP, topics=None),)
    )
    (group,) = (await harness.send(every)).groups
    assert [(t.topic_name, t.topic_id) for t in group.topics] == [("t", topic)]
    assert [
        (p.partition_index, p.start_offset, p.leader_epoch, p.lag)
        for p in group.topics[0].partitions
    ] == [(0, 7, 3, 2)]
    named = describe_v0.DescribeShareGroupOffsetsRequest(
        groups=(
            describe_v0.DescribeShareGroupOffsetsRequestGroup(
                group_id=GROUP,
                topics=(
                    describe_v0.DescribeShareGroupOffsetsRequestTopic(
                        topic_name="t", partitions=(1,)
                    ),
                    describe_v0.DescribeShareGroupOffsetsRequestTopic(
                        topic_name="nope", partitions=(0,)
                    ),
                ),
            ),
        )
    )
    (group,) = (await harness.send(named)).groups
    rows = [
        (t.topic_name, p.start_offset, p.error_code) for t in group.topics for p in t.partitions
    ]
    assert rows == [("t", -1, 0), ("nope", -1, UnknownTopicOrPartitionError.code)]

    def altering(partition: int, offset: int) -> alter.AlterShareGroupOffsetsRequest:
        return alter.AlterShareGroupOffsetsRequest(
            group_id=GROUP,
            topics=(
                alter.AlterShareGroupOffsetsRequestTopic(
                    topic_name="t",
                    partitions=(
                        alter.AlterShareGroupOffsetsRequestPartition(
                            partition_index=partition, start_offset=offset
                        ),
                    ),
                ),
            ),
        )

    assert (await harness.send(altering(1, 3))).error_code == NonEmptyGroupError.code
    await harness.send(heartbeat("a", -1, topics=None))
    altered = await harness.send(altering(1, 3))
    assert [p.error_code for t in altered.responses for p in t.partitions] == [0]
    unknown = await harness.send(altering(9, 3))
    assert [p.error_code for t in unknown.responses for p in t.partitions] == [
        UnknownTopicOrPartitionError.code
    ]
    assert harness.shares.share_start_offsets(GROUP)[(topic, 1)].start_offset == 3
    deleting = delete.DeleteShareGroupOffsetsRequest(
        group_id=GROUP,
        topics=(
            delete.DeleteShareGroupOffsetsRequestTopic(topic_name="t"),
            delete.DeleteShareGroupOffsetsRequestTopic(topic_name="nope"),
        ),
    )
    deleted = await harness.send(deleting)
    assert [(t.topic_name, t.error_code) for t in deleted.responses] == [
        ("t", 0),
        ("nope", UnknownTopicOrPartitionError.code),
    ]
    assert harness.shares.share_start_offsets(GROUP) == {}
    missing = alter.AlterShareGroupOffsetsRequest(group_id="none")
    assert (await harness.send(missing)).error_code == GroupIdNotFoundError.code
    assert uuid.UUID(int=0) not in {t for t, _ in harness.shares.share_start_offsets(GROUP)}
