"""Steps of the classic protocol that many tests take: joining (with KIP-394's second
JoinGroup), rebalancing a set of members, syncing them."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from .harness import Harness, join, sync

MEMBER_ID_REQUIRED = 79


async def member_id(h: Harness, *, client_id: str = "client", **join_args: Any) -> str:
    """A member id handed out by MEMBER_ID_REQUIRED (the first JoinGroup of v4+)."""
    first = await h.send(join(**join_args), client_id=client_id)
    assert first.error_code == MEMBER_ID_REQUIRED
    return str(first.member_id)


async def rebalance(
    h: Harness, members: Sequence[str], *, max_seconds: float = 60, **join_args: Any
) -> dict[str, Any]:
    """Every member of ``members`` (re)joins; time moves on until all are answered."""
    tasks = {m: h.start(join(m, **join_args)) for m in members}
    await h.settle()
    waited = 0.0
    while not all(t.done() for t in tasks.values()) and waited < max_seconds:
        h.advance(1)
        waited += 1
        await h.settle()
    assert all(t.done() for t in tasks.values()), f"still held after {max_seconds} s"
    return {m: t.result() for m, t in tasks.items()}


async def form_group(h: Harness, count: int, **join_args: Any) -> tuple[list[str], int, str]:
    """A Stable group of ``count`` new members: (member ids, generation, leader)."""
    ids = [await member_id(h, client_id=f"c{i}") for i in range(count)]
    answers = await rebalance(h, ids, **join_args)
    generation = {a.generation_id for a in answers.values()}
    assert len(generation) == 1, answers
    leader = next(iter(answers.values())).leader
    await sync_all(h, answers, {m: b"a-" + m.encode() for m in ids})
    return ids, generation.pop(), leader


async def sync_all(
    h: Harness, answers: Mapping[str, Any], assignments: Mapping[str, bytes]
) -> dict[str, Any]:
    """Every member sends its SyncGroup (the leader with ``assignments``); their answers."""
    tasks = {
        m: h.start(sync(m, a.generation_id, assignments if a.leader == m else None))
        for m, a in answers.items()
    }
    done = await asyncio.wait_for(asyncio.gather(*tasks.values()), timeout=5)
    return dict(zip(tasks, done, strict=True))
