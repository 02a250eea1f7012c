"""Static membership in classic groups (KIP-345): a member with a group instance id keeps its
place across restarts, and an older instance is fenced."""

from __future__ import annotations

from typing import Any

from .classic import member_id, rebalance, sync_all
from .harness import Harness, assignment_bytes, heartbeat_request, join, leave, sync

UNKNOWN_MEMBER_ID = 25
REBALANCE_IN_PROGRESS = 27
FENCED_INSTANCE_ID = 82


async def _static_group(
    h: Harness, instances: list[str], **join_args: Any
) -> tuple[list[str], int]:
    """A Stable group of static members (no MEMBER_ID_REQUIRED for them); their ids."""
    tasks = [h.start(join(instance=i, **join_args)) for i in instances]
    await h.settle()
    h.advance(6)
    await h.settle()
    answers = {t.result().member_id: t.result() for t in tasks}
    await sync_all(h, answers, {m: assignment_bytes(("t", n)) for n, m in enumerate(answers)})
    ids = [t.result().member_id for t in tasks]
    return ids, tasks[0].result().generation_id


async def test_a_restarted_static_follower_takes_its_place_without_a_rebalance() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    (first, second), generation = await _static_group(h, ["i0", "i1"])

    restarted = await h.send(join(instance="i1"))

    assert restarted.error_code == 0
    assert restarted.member_id != second
    assert restarted.member_id.startswith("i1-")
    assert (restarted.generation_id, restarted.leader, restarted.members) == (generation, first, ())
    mine = await h.send(sync(restarted.member_id, generation, instance="i1"))
    assert mine.assignment == assignment_bytes(("t", 1))  # the old instance's assignment
    # Nobody rebalances; the old instance is fenced.
    assert (await h.send(heartbeat_request(first, generation, instance="i0"))).error_code == 0
    old = await h.send(heartbeat_request(second, generation, instance="i1"))
    assert old.error_code == FENCED_INSTANCE_ID


async def test_a_restarted_static_leader_skips_the_assignment_from_v9() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    (first, _), generation = await _static_group(h, ["i0", "i1"])

    restarted = await h.send(join(instance="i0"))

    assert restarted.member_id != first
    assert (restarted.generation_id, restarted.leader) == (generation, restarted.member_id)
    assert restarted.skip_assignment is True
    assert len(restarted.members) == 2


async def test_before_v9_a_restarted_static_leader_is_told_the_old_leader_id() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    (first, _), generation = await _static_group(h, ["i0", "i1"], version=8)

    restarted = await h.send(join(instance="i0", version=8))

    # Told the old id, the new instance does not think it leads, so it assigns nothing anew.
    assert (restarted.generation_id, restarted.leader, restarted.members) == (generation, first, ())


async def test_a_static_member_that_does_not_rejoin_stays_in_the_next_generation() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    (first, second), generation = await _static_group(h, ["i0", "i1"], session_ms=60_000)

    rejoin = h.start(join(first, instance="i0", session_ms=60_000))  # the leader rebalances
    await h.settle()
    h.advance(30)
    await h.settle()

    answer = rejoin.result()
    assert answer.generation_id == generation + 1
    assert sorted(m.member_id for m in answer.members) == sorted([first, second])
    assert {m.group_instance_id for m in answer.members} == {"i0", "i1"}


async def test_a_new_instance_fences_the_old_ones_held_join() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    (first, second), generation = await _static_group(h, ["i0", "i1"], session_ms=60_000)
    newcomer = h.start(join(await member_id(h, client_id="c9"), session_ms=60_000))
    old = h.start(join(second, instance="i1", session_ms=60_000))
    await h.settle()
    assert not old.done()  # held: i0 has not rejoined yet

    new = h.start(join(instance="i1", session_ms=60_000))
    await h.settle()
    assert old.result().error_code == FENCED_INSTANCE_ID
    assert not new.done()

    leader = h.start(join(first, instance="i0", session_ms=60_000))
    await h.settle()
    answers = [t.result() for t in (newcomer, new, leader)]
    assert {a.generation_id for a in answers} == {generation + 1}
    assert new.result().member_id not in (first, second)
    assert {m.group_instance_id for m in leader.result().members} == {"i0", "i1", None}


async def test_joins_naming_a_static_member_wrongly_are_refused() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    (first, _), _ = await _static_group(h, ["i0", "i1"])

    assert (await h.send(join(first, instance="i9"))).error_code == UNKNOWN_MEMBER_ID
    assert (await h.send(join("someone", instance="i0"))).error_code == FENCED_INSTANCE_ID


async def test_a_static_member_rejoining_with_another_protocol_starts_a_rebalance() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    sub = assignment_bytes()
    (first, _), generation = await _static_group(
        h, ["i0", "i1"], protocols=[("range", sub), ("roundrobin", sub)]
    )

    restarted = h.start(join(instance="i1", protocols=[("roundrobin", sub)]))
    await h.settle()
    assert not restarted.done()
    answer = await h.send(heartbeat_request(first, generation, instance="i0"))
    assert answer.error_code == REBALANCE_IN_PROGRESS
    restarted.cancel()


async def test_an_administrator_removes_a_static_member_by_its_instance_id() -> None:
    h = Harness(group_initial_rebalance_delay_ms=3000)
    (first, second), generation = await _static_group(h, ["i0", "i1"])

    answer = await h.send(leave(("", "i1"), ("", "i7")))
    assert (await h.send(heartbeat_request(second, generation, instance="i1"))).error_code == (
        UNKNOWN_MEMBER_ID
    )

    assert [m.error_code for m in answer.members] == [0, UNKNOWN_MEMBER_ID]
    assert (await h.send(heartbeat_request(first, generation, instance="i0"))).error_code == (
        REBALANCE_IN_PROGRESS
    )
    rejoined = await rebalance(h, [first], instance="i0", max_seconds=0)
    assert [m.member_id for m in rejoined[first].members] == [first]
