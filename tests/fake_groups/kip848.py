"""A KIP-848 member as a client runs it, reduced to what the protocol needs: it heartbeats
with its epoch and what it owns, and on a new assignment gives up at once what it lost and
takes what it got (acknowledging both with its next heartbeat)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .harness import Harness, consumer_heartbeat


@dataclass
class Member:
    member_id: str
    topics: Sequence[str] = ("t",)
    instance: str | None = None
    assignor: str | None = None
    epoch: int = 0
    owned: frozenset[tuple[uuid.UUID, int]] = frozenset()
    last: Any = field(default=None, repr=False)

    async def beat(self, h: Harness, **extra: Any) -> Any:
        """One heartbeat: a full join at epoch 0, else the epoch and what it owns."""
        owned: dict[uuid.UUID, list[int]] = {}
        for topic_id, partition in sorted(self.owned):
            owned.setdefault(topic_id, []).append(partition)
        joining = self.epoch == 0
        extra.setdefault("topics", self.topics if joining else None)
        request = consumer_heartbeat(
            self.member_id,
            self.epoch,
            owned=None if joining else owned,
            instance=self.instance,
            assignor=self.assignor if joining else None,
            **extra,
        )
        answer = await h.send(request)
        self.last = answer
        if answer.error_code == 0:
            self.epoch = answer.member_epoch
            if answer.assignment is not None:
                self.owned = frozenset(
                    (t.topic_id, p)
                    for t in answer.assignment.topic_partitions
                    for p in t.partitions
                )
        return answer

    async def leave(self, h: Harness, epoch: int = -1) -> Any:
        answer = await h.send(consumer_heartbeat(self.member_id, epoch, instance=self.instance))
        self.owned = frozenset()
        self.epoch = 0
        return answer

    def partitions(self) -> set[int]:
        return {p for _, p in self.owned}


def assert_disjoint(members: Iterable[Member]) -> None:
    """No partition is owned by two members."""
    seen: dict[tuple[uuid.UUID, int], str] = {}
    for m in members:
        for tp in m.owned:
            assert tp not in seen, f"{tp} owned by {seen[tp]} and {m.member_id}"
            seen[tp] = m.member_id
