"""The state of one in-flight record of a share partition, and what moves it (KIP-932).

States (Kafka's ``RecordState``): AVAILABLE (may be acquired), ACQUIRED (delivered to one
member, under a lock), ACKNOWLEDGED and ARCHIVED (terminal: never delivered again). The moves
are one table; a move outside it is a bug in the fake and raises. Two rules ride on the moves,
as in Kafka's ``InFlightState``:

- acquiring counts a delivery;
- a record going back to AVAILABLE (released, its lock expired, its member gone) whose
  delivery count has reached the group's limit is ARCHIVED instead, as is one that fell below
  the partition's start offset.

Acknowledge types (the wire's ``AcknowledgeTypes``): GAP (0, an offset that is no record: a
control record or one compaction removed) and REJECT (3) archive, ACCEPT (1) acknowledges,
RELEASE (2) makes the record available again, RENEW (4, ShareFetch and ShareAcknowledge v2,
KIP-1222) keeps it acquired and restarts its lock.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "NO_MEMBER",
    "TARGETS",
    "TRANSITIONS",
    "AcknowledgeType",
    "IllegalRecordTransitionError",
    "InFlight",
    "RecordState",
]

NO_MEMBER = ""


class RecordState(enum.Enum):
    """An in-flight record's state; the values are Kafka's ids (persisted share state)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4

    @property
    def terminal(self) -> bool:
        """Whether the record's state is final (acknowledged or archived)."""
        return self in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


_S = RecordState

TRANSITIONS: frozenset[tuple[RecordState, RecordState]] = frozenset(
    {
        (_S.AVAILABLE, _S.ACQUIRED),  # a fetch acquires it
        (_S.AVAILABLE, _S.ARCHIVED),  # the log start moved past it
        (_S.ACQUIRED, _S.AVAILABLE),  # released, its lock expired, or its member left
        (_S.ACQUIRED, _S.ACKNOWLEDGED),  # ACCEPT
        (_S.ACQUIRED, _S.ARCHIVED),  # REJECT, GAP, or the delivery count limit
    }
)


class AcknowledgeType(enum.IntEnum):
    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


# The state each acknowledge type moves an acquired record to (RENEW keeps it acquired).
TARGETS: Mapping[AcknowledgeType, RecordState] = {
    AcknowledgeType.GAP: _S.ARCHIVED,
    AcknowledgeType.ACCEPT: _S.ACKNOWLEDGED,
    AcknowledgeType.RELEASE: _S.AVAILABLE,
    AcknowledgeType.REJECT: _S.ARCHIVED,
    AcknowledgeType.RENEW: _S.ACQUIRED,
}


class IllegalRecordTransitionError(RuntimeError):
    """A move the table does not allow: a bug in the fake."""


@dataclass(slots=True)
class InFlight:
    """One offset between the share partition's start and end: its state, how often it was
    delivered, and (while ACQUIRED) by whom and under which lock."""

    state: RecordState = RecordState.AVAILABLE
    delivery_count: int = 0
    member_id: str = NO_MEMBER
    lock: int = 0  # the id of the acquisition lock holding it; 0: none

    def move(self, target: RecordState) -> None:
        if (self.state, target) not in TRANSITIONS:
            raise IllegalRecordTransitionError(
                f"an in-flight record cannot go {self.state.name} -> {target.name}"
            )
        self.state = target
        if target is not RecordState.ACQUIRED:
            self.member_id = NO_MEMBER
            self.lock = 0

    def acquire(self, member_id: str, lock: int) -> None:
        self.move(RecordState.ACQUIRED)
        self.delivery_count += 1
        self.member_id = member_id
        self.lock = lock

    def give_back(self, limit: int, *, below_start: bool) -> None:
        """Back to AVAILABLE, or ARCHIVED at the delivery count limit or below the start."""
        archived = below_start or self.delivery_count >= limit
        self.move(RecordState.ARCHIVED if archived else RecordState.AVAILABLE)
