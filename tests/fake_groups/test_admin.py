"""Group administration (DescribeGroups, ListGroups, DeleteGroups) at every version, routing
to the coordinating node, and closing the coordinator."""

from __future__ import annotations

import pytest

from kafkawire.messages import request_type
from kafkawire.messages.delete_groups import v2 as delete_groups
from kafkawire.messages.describe_groups import v6 as describe_groups
from kafkawire.messages.list_groups import v5 as list_groups
from kafkawire.protocol.versions import convert

from .classic import form_group, member_id
from .harness import Harness, assignment_bytes, commit, fetch, heartbeat_request, join
from .kip848 import Member

NOT_COORDINATOR = 16
COORDINATOR_NOT_AVAILABLE = 15
NON_EMPTY_GROUP = 68
GROUP_ID_NOT_FOUND = 69
ALL_GROUP_OPERATIONS = 3400  # READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS


def _describe(*groups: str, version: int = 6, operations: bool = False) -> object:
    request = describe_groups.DescribeGroupsRequest(
        groups=groups, include_authorized_operations=operations
    )
    return convert(request, version)


@pytest.mark.parametrize("version", range(7))
async def test_describe_groups_shows_a_stable_groups_members(version: int) -> None:
    h = Harness()
    (a,), _, _ = await form_group(h, 1)

    answer = await h.send(_describe("g", version=version))

    (group,) = answer.groups
    assert (group.error_code, group.group_state, group.protocol_type, group.protocol_data) == (
        0,
        "Stable",
        "consumer",
        "range",
    )
    (member,) = group.members
    assert (member.member_id, member.client_id, member.client_host) == (a, "client", "/127.0.0.1")
    assert member.member_assignment == b"a-" + a.encode()
    assert member.member_metadata


async def test_describe_groups_leaves_metadata_out_before_the_group_is_stable() -> None:
    h = Harness()
    joined = h.start(join(await member_id(h), version=9))
    await h.settle()
    (group,) = (await h.send(_describe("g"))).groups
    assert group.group_state == "CompletingRebalance"
    assert group.protocol_data == ""
    assert [(m.member_metadata, m.member_assignment) for m in group.members] == [(b"", b"")]
    assert joined.done()


@pytest.mark.parametrize("version", range(7))
async def test_groups_that_are_not_classic_describe_as_dead(version: int) -> None:
    h = Harness()
    await Member("m").beat(h)
    answer = await h.send(_describe("g", "nope", version=version))
    states = [(g.group_id, g.group_state, g.error_code) for g in answer.groups]
    code = GROUP_ID_NOT_FOUND if version >= 6 else 0
    assert states == [("g", "Dead", code), ("nope", "Dead", code)]
    if version >= 6:
        assert [g.error_message for g in answer.groups] == [
            "Group g is not a classic group.",
            "Group nope not found.",
        ]


async def test_authorized_operations_are_given_when_asked() -> None:
    h = Harness()
    await form_group(h, 1)
    asked = await h.send(_describe("g", operations=True))
    assert asked.groups[0].authorized_operations == ALL_GROUP_OPERATIONS
    assert (await h.send(_describe("g"))).groups[0].authorized_operations == -(2**31)


@pytest.mark.parametrize("version", range(6))
async def test_list_groups_lists_the_nodes_groups_with_state_and_type(version: int) -> None:
    h = Harness({"t": 1})
    h.view.coordinators["far"] = 1
    await form_group(h, 1)
    await Member("k").beat(h, group="kip")
    await h.send(commit({("t", 0): 1}, group="simple"))
    await h.send(commit({("t", 0): 1}, group="far"), node=1)

    answer = await h.send(convert(list_groups.ListGroupsRequest(), version))

    listed = {g.group_id: g for g in answer.groups}
    assert set(listed) == {"g", "kip", "simple"}
    assert (listed["g"].protocol_type, listed["kip"].protocol_type) == ("consumer", "consumer")
    assert listed["simple"].protocol_type == ""
    if version >= 4:
        assert {k: g.group_state for k, g in listed.items()} == {
            "g": "Stable",
            "kip": "Stable",
            "simple": "Empty",
        }
    if version >= 5:
        assert {k: g.group_type for k, g in listed.items()} == {
            "g": "classic",
            "kip": "consumer",
            "simple": "classic",
        }


async def test_list_groups_filters_by_state_and_type() -> None:
    h = Harness({"t": 1})
    await form_group(h, 1)
    await Member("k").beat(h, group="kip")
    await h.send(commit({("t", 0): 1}, group="simple"))

    async def listed(states: tuple[str, ...] = (), types: tuple[str, ...] = ()) -> set[str]:
        request = list_groups.ListGroupsRequest(states_filter=states, types_filter=types)
        return {g.group_id for g in (await h.send(request)).groups}

    assert await listed(states=("stable",)) == {"g", "kip"}
    assert await listed(states=("EMPTY", "Stable")) == {"g", "kip", "simple"}
    assert await listed(types=("Consumer",)) == {"kip"}
    assert await listed(states=("stable",), types=("classic",)) == {"g"}
    assert await listed(types=("share",)) == set()


@pytest.mark.parametrize("version", range(3))
async def test_delete_groups_deletes_only_empty_groups_with_their_offsets(version: int) -> None:
    h = Harness({"t": 1})
    h.view.coordinators["far"] = 1
    await form_group(h, 1)
    await h.send(commit({("t", 0): 5}, group="simple"))
    request = convert(
        delete_groups.DeleteGroupsRequest(groups_names=("g", "simple", "nope", "far", "simple")),
        version,
    )

    answer = await h.send(request)

    assert [(r.group_id, r.error_code) for r in answer.results] == [
        ("g", NON_EMPTY_GROUP),
        ("simple", 0),
        ("nope", GROUP_ID_NOT_FOUND),
        ("far", NOT_COORDINATOR),
    ]
    offsets = await h.send(fetch([("t", 0)], group="simple"))
    assert offsets.groups[0].topics[0].partitions[0].committed_offset == -1


async def test_batched_describes_answer_not_coordinator_per_group() -> None:
    h = Harness()
    h.view.coordinators["far"] = 2
    await form_group(h, 1)
    answer = await h.send(_describe("g", "far"))
    assert [(g.group_id, g.error_code) for g in answer.groups] == [
        ("g", 0),
        ("far", NOT_COORDINATOR),
    ]


async def test_closing_answers_held_requests_and_refuses_new_ones() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    held = h.start(join(await member_id(h)))
    await h.settle()
    assert not held.done()

    h.coordinator.close()
    await h.settle()

    assert held.result().error_code == NOT_COORDINATOR
    assert (await h.send(heartbeat_request("m", 1))).error_code == COORDINATOR_NOT_AVAILABLE
    refused = await h.send(commit({("t", 0): 1}))
    assert refused.topics[0].partitions[0].error_code == COORDINATOR_NOT_AVAILABLE
    for key in h.coordinator.API_KEYS:
        request = request_type(key, 0)()
        assert await h.send(request) is not None


async def test_describe_after_a_sync_shows_what_the_leader_assigned() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    (a, b), _, _ = await form_group(h, 2)
    (group,) = (await h.send(_describe("g"))).groups
    assert {m.member_id: m.member_assignment for m in group.members} == {
        a: b"a-" + a.encode(),
        b: b"a-" + b.encode(),
    }
    assert assignment_bytes() != b""
