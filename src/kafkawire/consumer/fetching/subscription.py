"""What the consumer reads: the assigned partitions and, for each, where it stands.

Rules kept here:

- A partition's ``position`` is the offset of the next record the application gets; it moves
  only when records are handed out (or skipped: aborted, control, compacted away), or by a
  seek. ``None`` means it is not known yet: the group's committed offset or the reset policy
  decides it (``reset`` holds the policy to apply).
- Every change of position that does not come from consuming (a seek, a reset, a new
  assignment) bumps the partition's ``epoch``: fetched data tagged with an older epoch is
  dropped, so nothing fetched before a seek is ever returned after it.
- A position also carries ``leader_epoch``, the leader epoch of the record before it (of the
  last record handed out, or committed with the offset; -1 when unknown), and
  ``current_leader``, the (leader, leader epoch) it was last checked against. When the
  metadata names another leader or epoch, a position with a known epoch waits for
  validation (KIP-320, see :mod:`.leader_epochs`) and is not fetched until it passes;
  :meth:`SubscriptionState.complete_validation` applies the leader's answer as Java's
  ``SubscriptionState.maybeCompleteValidation`` does.
- A partition being revoked (:meth:`SubscriptionState.start_revoking`) is neither fetched nor
  handed out any more, so the positions committed before it goes are the last ones the
  application saw: its next owner reads on from there, and nothing is read twice.
- Changes call ``on_change`` so that the fetcher plans its next requests at once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.errors import LogTruncationError, NotAssignedError

from .leader_epochs import EpochEnd

__all__ = ["PartitionState", "SubscriptionState"]


@dataclass(slots=True)
class PartitionState:
    position: int | None = None
    reset: str | None = None  # "earliest" / "latest" / "none" while position is None
    epoch: int = 0
    paused: bool = False
    revoking: bool = False  # being given up: no more fetching, nothing more handed out
    high_watermark: int = -1
    last_stable_offset: int = -1
    leader_epoch: int = -1  # of the record before the position: for commits and validation
    current_leader: tuple[int, int] | None = None  # (node id, leader epoch) checked against
    awaiting_validation: bool = False

    def move(self, position: int | None, leader_epoch: int = -1) -> None:
        """A new position that does not come from consuming (see the module doc)."""
        self.position, self.leader_epoch = position, leader_epoch
        self.current_leader, self.awaiting_validation = None, False
        self.epoch += 1

    @property
    def readable(self) -> bool:
        """Whether records of the partition may be fetched and handed out."""
        return not (self.paused or self.revoking)

    @property
    def fetchable(self) -> bool:
        """Whether the partition may be fetched now: positioned, readable, validated."""
        return self.position is not None and self.readable and not self.awaiting_validation


class SubscriptionState:
    """The assignment (manual or from a group), the topics subscribed to, and the positions."""

    def __init__(self, default_reset: str, on_change: Callable[[], None]) -> None:
        self.default_reset = default_reset
        self.topics: frozenset[str] = frozenset()  # subscribed topics; empty: manual assignment
        self._partitions: dict[TopicPartition, PartitionState] = {}
        self._on_change = on_change

    # --- assignment ------------------------------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Make ``partitions`` the assignment; those kept keep their positions."""
        old = self._partitions
        self._partitions = {tp: old.get(tp) or PartitionState() for tp in dict.fromkeys(partitions)}
        self._on_change()

    def assigned(self) -> list[TopicPartition]:
        return list(self._partitions)

    def state(self, tp: TopicPartition) -> PartitionState:
        state = self._partitions.get(tp)
        if state is None:
            raise NotAssignedError(f"{tp.topic}/{tp.partition} is not assigned to this consumer")
        return state

    def get(self, tp: TopicPartition) -> PartitionState | None:
        return self._partitions.get(tp)

    # --- positions -------------------------------------------------------------------------

    def seek(self, tp: TopicPartition, offset: int, leader_epoch: int = -1) -> None:
        """Read ``tp`` from ``offset`` on; ``leader_epoch`` (of the record before it, as a
        commit carries it) has the position validated against the leader's log first."""
        state = self.state(tp)
        state.move(offset, leader_epoch)
        state.reset = None
        self._on_change()

    def request_reset(
        self, partitions: Iterable[TopicPartition], policy: str | None = None
    ) -> None:
        """Forget the positions of ``partitions``; the policy (by default the consumer's
        ``auto_offset_reset``) decides them again."""
        for tp in partitions:
            state = self.state(tp)
            state.move(None)
            state.reset = policy or self.default_reset
        self._on_change()

    def needing_reset(self) -> dict[TopicPartition, str]:
        return {tp: s.reset for tp, s in self._partitions.items() if s.reset is not None}

    def unpositioned(self) -> list[TopicPartition]:
        """Partitions with neither a position nor a reset to apply (waiting for commits)."""
        return [tp for tp, s in self._partitions.items() if s.position is None and not s.reset]

    def fetchable(self) -> list[TopicPartition]:
        return [tp for tp, s in self._partitions.items() if s.fetchable]

    def positions(self) -> dict[TopicPartition, int]:
        return {tp: s.position for tp, s in self._partitions.items() if s.position is not None}

    # --- validation (KIP-320) -------------------------------------------------------------

    def leader_seen(self, tp: TopicPartition, leader: tuple[int, int], can_validate: bool) -> bool:
        """The metadata names ``leader`` (node id, leader epoch) for ``tp``; whether its
        position must now be validated (it then drops what was fetched for it: the epoch
        moves on). A broker that ``can_validate`` not is believed as it is."""
        state = self.state(tp)
        if state.current_leader == leader or state.position is None:
            return state.awaiting_validation
        state.current_leader = leader
        if can_validate and state.leader_epoch >= 0 and leader[1] >= 0:
            state.awaiting_validation = True
            state.epoch += 1
        return state.awaiting_validation

    def needing_validation(self) -> list[TopicPartition]:
        return [tp for tp, s in self._partitions.items() if s.awaiting_validation]

    def complete_validation(
        self, tp: TopicPartition, epoch: int, end: EpochEnd, *, diverged: bool = False
    ) -> LogTruncationError | None:
        """Apply the leader's answer for the position ``tp`` had at ``epoch``: go on if its log
        reaches the position; if it was cut below it, move to where it parts (or, when the
        leader knows nothing of the position's epoch, reset by the policy), or with
        ``auto_offset_reset="none"`` the error to report. ``diverged``: the answer is a Fetch's
        diverging epoch, which needs no validation to have been asked for."""
        state = self._partitions.get(tp)
        if state is None or state.epoch != epoch:
            return None  # seeked, reset or unassigned meanwhile
        if not (state.awaiting_validation or diverged):
            return None
        assert state.position is not None
        if not end.undefined and end.end_offset >= state.position:
            state.awaiting_validation = False
            return None
        if self.default_reset == "none":
            return LogTruncationError(tp, state.position, None if end.undefined else end.end_offset)
        if end.undefined:
            self.request_reset([tp])
        else:
            checked = state.current_leader
            state.move(end.end_offset, end.leader_epoch)
            state.current_leader = checked  # validated against this leader: fetch at once
            self._on_change()
        return None

    # --- pausing ---------------------------------------------------------------------------

    def pause(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            self.state(tp).paused = True
        self._on_change()

    def resume(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            self.state(tp).paused = False
        self._on_change()

    def paused(self) -> set[TopicPartition]:
        return {tp for tp, s in self._partitions.items() if s.paused}

    # --- revoking --------------------------------------------------------------------------

    def start_revoking(self, partitions: Collection[TopicPartition]) -> None:
        """Stop fetching ``partitions`` and handing out their records: the group takes them
        away once their positions are committed (they stay assigned until then)."""
        for tp in partitions:
            state = self._partitions.get(tp)
            if state is not None:
                state.revoking = True
        self._on_change()
