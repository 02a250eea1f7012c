"""Classic groups: JoinGroup, SyncGroup, Heartbeat and LeaveGroup by Kafka's rules, on the
fake's group coordinator with a hand-driven clock."""

from __future__ import annotations

import pytest

from kafkawire.consumer.member_data import encode_subscription

from .classic import MEMBER_ID_REQUIRED, form_group, member_id, rebalance, sync_all
from .harness import Harness, assignment_bytes, heartbeat_request, join, leave, sync

ILLEGAL_GENERATION = 22
INCONSISTENT_GROUP_PROTOCOL = 23
INVALID_GROUP_ID = 24
UNKNOWN_MEMBER_ID = 25
INVALID_SESSION_TIMEOUT = 26
REBALANCE_IN_PROGRESS = 27
NOT_COORDINATOR = 16


def _three() -> Harness:
    # Several members join a new group within the initial rebalance delay.
    return Harness(group_initial_rebalance_delay_ms=3000)


async def test_from_v4_a_new_member_is_given_an_id_to_join_with() -> None:
    h = Harness()
    first = await h.send(join(version=4))
    assert first.error_code == MEMBER_ID_REQUIRED
    assert first.member_id.startswith("client-")

    answer = await h.send(join(first.member_id, version=4))

    assert (answer.error_code, answer.generation_id, answer.member_id) == (0, 1, first.member_id)
    assert answer.leader == first.member_id
    assert [m.member_id for m in answer.members] == [first.member_id]


@pytest.mark.parametrize("version", [0, 1, 2, 3])
async def test_before_v4_a_new_member_joins_at_once(version: int) -> None:
    h = Harness()
    answer = await h.send(join(version=version))
    assert answer.error_code == 0
    assert answer.generation_id == 1
    assert answer.leader == answer.member_id


async def test_three_members_form_one_generation_the_leader_alone_gets_their_metadata() -> None:
    h = _three()
    ids = [await member_id(h, client_id=f"c{i}") for i in range(3)]
    tasks = [h.start(join(m)) for m in ids]
    await h.settle()
    assert not any(t.done() for t in tasks)  # held for the initial rebalance delay

    h.advance(3)
    await h.settle()
    assert not any(t.done() for t in tasks)  # new members came: the delay is stretched once

    h.advance(3)
    await h.settle()
    answers = [t.result() for t in tasks]
    assert {a.generation_id for a in answers} == {1}
    leader = answers[0].leader
    assert leader == ids[0]
    for a in answers:
        if a.member_id == leader:
            assert sorted(m.member_id for m in a.members) == sorted(ids)
            assert all(m.metadata == encode_subscription(["t"]) for m in a.members)
        else:
            assert a.members == ()


async def test_followers_sync_waits_for_the_leaders_assignment() -> None:
    h = _three()
    ids = [await member_id(h, client_id=f"c{i}") for i in range(3)]
    answers = await rebalance(h, ids)
    leader = answers[ids[0]].leader
    followers = [m for m in ids if m != leader]

    held = [h.start(sync(m, 1)) for m in followers]
    await h.settle()
    assert not any(t.done() for t in held)

    plan = {leader: assignment_bytes(("t", 0), ("t", 1)), followers[0]: assignment_bytes(("t", 2))}
    mine = await h.send(sync(leader, 1, plan))
    await h.settle()

    assert mine.assignment == plan[leader]
    assert held[0].result().assignment == plan[followers[0]]
    assert held[1].result().assignment == b""  # the leader left it out
    assert held[1].result().error_code == 0
    # A SyncGroup in the Stable group is answered at once with the same assignment.
    again = await h.send(sync(followers[0], 1))
    assert again.assignment == plan[followers[0]]


async def test_a_rebalance_completes_as_soon_as_every_member_rejoined() -> None:
    h = _three()
    (a, b), generation, _ = await form_group(h, 2)
    c = await member_id(h, client_id="c9")

    newcomer = h.start(join(c))
    await h.settle()
    assert not newcomer.done()
    assert (await h.send(heartbeat_request(a, generation))).error_code == REBALANCE_IN_PROGRESS
    assert (await h.send(heartbeat_request(b, generation))).error_code == REBALANCE_IN_PROGRESS

    # No time passes: the last of the known members rejoining completes the join.
    answers = await rebalance(h, [a, b], max_seconds=0)
    await h.settle()

    assert newcomer.result().generation_id == generation + 1
    assert {x.generation_id for x in answers.values()} == {generation + 1}


async def test_members_that_do_not_rejoin_are_dropped_at_the_rebalance_timeout() -> None:
    h = _three()
    (a, b, c), generation, leader = await form_group(h, 3, session_ms=60_000)
    assert leader == a

    # A new member d starts a rebalance; b rejoins, a (the leader) and c never do (their
    # sessions outlast it): after the rebalance timeout (30 s) the group goes on without them,
    # led by a member that rejoined.
    d = await member_id(h, client_id="c9")
    newcomer = h.start(join(d, session_ms=60_000))
    held = h.start(join(b, session_ms=60_000))
    await h.settle()
    h.advance(29.9)
    await h.settle()
    assert not held.done()
    h.advance(0.2)
    await h.settle()

    answer = held.result()
    assert (answer.generation_id, answer.leader) == (generation + 1, b)
    assert sorted(m.member_id for m in answer.members) == sorted([b, d])
    assert newcomer.result().leader == b
    assert (await h.send(heartbeat_request(a, generation))).error_code == UNKNOWN_MEMBER_ID
    assert (await h.send(heartbeat_request(c, generation))).error_code == UNKNOWN_MEMBER_ID


async def test_the_protocol_is_the_most_voted_one_every_member_supports() -> None:
    h = _three()
    sub = encode_subscription(["t"])
    choices = {
        "c0": [("roundrobin", sub), ("range", sub)],
        "c1": [("range", sub), ("roundrobin", sub)],
        "c2": [("roundrobin", sub), ("range", sub), ("sticky", sub)],
    }
    ids = {c: await member_id(h, client_id=c) for c in choices}
    tasks = [h.start(join(ids[c], protocols=p)) for c, p in choices.items()]
    await h.settle()
    h.advance(6)
    await h.settle()

    assert {t.result().protocol_name for t in tasks} == {"roundrobin"}
    leader_answer = next(t.result() for t in tasks if t.result().members)
    assert all(m.metadata == sub for m in leader_answer.members)

    # A member supporting none of the group's protocols, or another type, is refused.
    refused = await h.send(join(protocols=[("sticky", sub)]))
    assert refused.error_code == INCONSISTENT_GROUP_PROTOCOL
    other_type = await h.send(join(protocol_type="connect"))
    assert other_type.error_code == INCONSISTENT_GROUP_PROTOCOL


async def test_heartbeats_answer_unknown_member_illegal_generation_and_rebalance() -> None:
    h = Harness()
    (a,), generation, _ = await form_group(h, 1)

    assert (await h.send(heartbeat_request(a, generation))).error_code == 0
    assert (await h.send(heartbeat_request("ghost", generation))).error_code == UNKNOWN_MEMBER_ID
    assert (await h.send(heartbeat_request(a, generation + 1))).error_code == ILLEGAL_GENERATION
    assert (await h.send(heartbeat_request(a, 1, group="nope"))).error_code == UNKNOWN_MEMBER_ID
    assert (await h.send(heartbeat_request(a, 1, group=""))).error_code == INVALID_GROUP_ID
    for version in range(5):
        answer = await h.send(heartbeat_request(a, generation, version=version))
        assert answer.error_code == 0


async def test_a_member_whose_session_expires_is_dropped_and_the_group_rebalances() -> None:
    h = _three()
    (a, b), generation, _ = await form_group(h, 2, session_ms=10_000)

    for _ in range(2):  # a keeps its session; b sends nothing
        h.advance(4)
        assert (await h.send(heartbeat_request(a, generation))).error_code == 0
    h.advance(4)
    answer = await h.send(heartbeat_request(a, generation))
    assert answer.error_code == REBALANCE_IN_PROGRESS  # b's 10 s ran out at 12 s

    rejoined = await rebalance(h, [a], max_seconds=0)
    assert rejoined[a].generation_id == generation + 1
    assert [m.member_id for m in rejoined[a].members] == [a]
    assert (await h.send(heartbeat_request(b, generation))).error_code == UNKNOWN_MEMBER_ID


async def test_commits_keep_a_classic_members_session() -> None:
    h = Harness()
    (a,), generation, _ = await form_group(h, 1, session_ms=10_000)
    from .harness import commit

    for _ in range(5):
        h.advance(6)
        answer = await h.send(commit({("t", 0): 1}, generation=generation, member_id=a))
        assert answer.topics[0].partitions[0].error_code == 0
    assert (await h.send(heartbeat_request(a, generation))).error_code == 0


async def test_sync_group_errors() -> None:
    h = Harness()
    (a,), generation, _ = await form_group(h, 1)

    assert (await h.send(sync(a, generation + 1))).error_code == ILLEGAL_GENERATION
    assert (await h.send(sync("ghost", generation))).error_code == UNKNOWN_MEMBER_ID
    assert (await h.send(sync(a, generation, protocol="other"))).error_code == (
        INCONSISTENT_GROUP_PROTOCOL
    )
    # From v5 the protocol type and name are required.
    missing = await h.send(sync(a, generation, protocol=None))
    assert missing.error_code == INCONSISTENT_GROUP_PROTOCOL
    assert (await h.send(sync(a, 1, group="nope"))).error_code == UNKNOWN_MEMBER_ID
    assert (await h.send(sync(a, 1, group=""))).error_code == INVALID_GROUP_ID

    # While a rebalance is prepared, SyncGroup is REBALANCE_IN_PROGRESS.
    newcomer = h.start(join(await member_id(h)))
    await h.settle()
    assert (await h.send(sync(a, generation))).error_code == REBALANCE_IN_PROGRESS
    newcomer.cancel()


async def test_members_that_send_no_sync_group_are_dropped_after_the_rebalance_timeout() -> None:
    h = _three()
    ids = [await member_id(h, client_id=f"c{i}") for i in range(2)]
    answers = await rebalance(h, ids, session_ms=60_000)
    leader = answers[ids[0]].leader
    other = next(m for m in ids if m != leader)
    assert (await h.send(sync(leader, 1, {leader: b"x"}))).error_code == 0

    h.advance(31)  # the other member never syncs
    answer = await h.send(heartbeat_request(leader, 1))
    assert answer.error_code == REBALANCE_IN_PROGRESS
    assert (await h.send(heartbeat_request(other, 1))).error_code == UNKNOWN_MEMBER_ID


async def test_followers_waiting_for_a_leader_that_never_syncs_are_told_to_rejoin() -> None:
    h = _three()
    ids = [await member_id(h, client_id=f"c{i}", session_ms=60_000) for i in range(3)]
    answers = await rebalance(h, ids, session_ms=60_000)
    leader = answers[ids[0]].leader
    held = [h.start(sync(m, 1)) for m in ids if m != leader]
    await h.settle()

    h.advance(30)  # the rebalance timeout: the leader is dropped, the group rebalances
    await h.settle()

    assert [t.result().error_code for t in held] == [REBALANCE_IN_PROGRESS] * 2
    assert (await h.send(heartbeat_request(leader, 1))).error_code == UNKNOWN_MEMBER_ID


async def test_a_known_member_rejoining_with_the_same_metadata_gets_the_generation_again() -> None:
    h = _three()
    ids = [await member_id(h, client_id=f"c{i}") for i in range(2)]
    answers = await rebalance(h, ids)  # CompletingRebalance: nobody synced yet
    leader = answers[ids[0]].leader
    follower = next(m for m in ids if m != leader)

    again = await h.send(join(follower))
    assert (again.generation_id, again.members) == (1, ())
    leader_again = await h.send(join(leader))
    assert {m.member_id for m in leader_again.members} == set(ids)

    # In the Stable group, a follower with the same metadata is answered at once, the
    # leader's JoinGroup starts a rebalance.
    await sync_all(h, answers, {})
    assert (await h.send(join(follower))).generation_id == 1
    rejoin = h.start(join(leader))
    await h.settle()
    assert not rejoin.done()
    assert (await h.send(heartbeat_request(follower, 1))).error_code == REBALANCE_IN_PROGRESS
    rejoin.cancel()


async def test_a_pending_member_id_that_is_never_used_expires_and_stops_blocking() -> None:
    h = Harness()
    (a,), generation, _ = await form_group(h, 1, session_ms=10_000)
    await member_id(h, session_ms=10_000)  # handed out, never used

    rejoin = h.start(join(a))  # the leader's join starts a rebalance
    await h.settle()
    assert not rejoin.done()  # the pending member id counts as a member yet to join

    h.advance(10)
    await h.settle()
    assert rejoin.result().generation_id == generation + 1


async def test_join_group_refuses_bad_session_timeouts_and_group_ids() -> None:
    h = Harness()
    assert (await h.send(join(session_ms=5999))).error_code == INVALID_SESSION_TIMEOUT
    assert (await h.send(join(session_ms=1_800_001))).error_code == INVALID_SESSION_TIMEOUT
    assert (await h.send(join(group=""))).error_code == INVALID_GROUP_ID
    unknown = await h.send(join("someone"))
    assert unknown.error_code == UNKNOWN_MEMBER_ID
    assert unknown.member_id == "someone"


@pytest.mark.parametrize("version", [0, 6])
async def test_an_error_before_v7_carries_an_empty_protocol_name(version: int) -> None:
    h = Harness()
    await form_group(h, 1)
    answer = await h.send(join("ghost", version=version))
    assert answer.error_code == UNKNOWN_MEMBER_ID
    assert answer.protocol_name == ""


async def test_leave_group_batches_members_each_answered_on_its_own() -> None:
    h = _three()
    (a, b, c), generation, _ = await form_group(h, 3)

    answer = await h.send(leave((a, None), ("ghost", None)))

    assert answer.error_code == 0
    assert [(m.member_id, m.error_code) for m in answer.members] == [
        (a, 0),
        ("ghost", UNKNOWN_MEMBER_ID),
    ]
    assert (await h.send(heartbeat_request(b, generation))).error_code == REBALANCE_IN_PROGRESS
    rejoined = await rebalance(h, [b, c], max_seconds=0)
    assert {x.generation_id for x in rejoined.values()} == {generation + 1}


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_before_v3_leave_group_names_one_member_and_answers_its_error(version: int) -> None:
    h = Harness()
    (a,), _, _ = await form_group(h, 1)
    assert (await h.send(leave(("ghost", None), version=version))).error_code == UNKNOWN_MEMBER_ID
    assert (await h.send(leave((a, None), version=version))).error_code == 0
    assert (await h.send(leave((a, None), version=version, group="nope"))).error_code == (
        UNKNOWN_MEMBER_ID
    )


async def test_the_last_member_leaving_empties_the_group() -> None:
    h = Harness()
    (a,), generation, _ = await form_group(h, 1)
    assert (await h.send(leave((a, None)))).members[0].error_code == 0
    # The group is Empty, at the next generation; its member is unknown.
    assert (await h.send(heartbeat_request(a, generation + 1))).error_code == UNKNOWN_MEMBER_ID
    assert (await h.send(sync(a, generation + 1))).error_code == UNKNOWN_MEMBER_ID
    again = await member_id(h)
    assert (await h.send(join(again))).generation_id == generation + 2


async def test_another_node_answers_not_coordinator() -> None:
    h = Harness()
    h.view.coordinators["g"] = 1
    for request in (join(), sync("m", 1), heartbeat_request("m", 1), leave(("m", None))):
        assert (await h.send(request, node=0)).error_code == NOT_COORDINATOR
    assert (await h.send(join(), node=1)).error_code == MEMBER_ID_REQUIRED
