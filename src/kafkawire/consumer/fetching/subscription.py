"""What the consumer reads: the assigned partitions and, for each, where it stands.

Rules kept here:

- Each partition is in one fetch state (:mod:`.fetch_state`): waiting for a committed offset,
  for a reset, for validation, or fetching; every change of state goes through the table there.
  ``position`` is the offset of the next record the application gets, known while fetching or
  validating; it moves only when records are handed out (or skipped: aborted, control,
  compacted away), or by a seek or a reset.
- Every move of a partition's fetch state (a seek, a reset asked for or done, a committed
  offset taken up, validation started or done) bumps its ``epoch``; consuming does not. Work
  done in the background (a ListOffsets, a committed-offset lookup, a Fetch,
  a validation) names the epoch the partition had when it began, and what it writes here is
  dropped if the epoch moved on meanwhile: nothing fetched or looked up before a seek is
  applied after it, and nothing fetched before it is ever returned after it.
- A position also carries ``leader_epoch``, the leader epoch of the record before it (of the
  last record handed out, or committed with the offset; -1 when unknown), and
  ``current_leader``, the (leader, leader epoch) it was last checked against. When the
  metadata names another leader or epoch, a position with a known epoch waits for validation
  (KIP-320, see :mod:`.leader_epochs`) and is not fetched until it passes;
  :meth:`SubscriptionState.complete_validation` applies the leader's answer as Java's
  ``SubscriptionState.maybeCompleteValidation`` does.
- Pausing and revoking are apart from the fetch state. A partition being revoked
  (:meth:`SubscriptionState.start_revoking`) is neither fetched nor handed out any more, so
  the positions committed before it goes are the last ones the application saw: its next
  owner reads on from there, and nothing is read twice.
- Whoever waits for a position waits on the partition (:meth:`SubscriptionState.positioned`),
  which ends the wait the moment it has one (or leaves the assignment).
- The application's changes call ``on_change`` so that the fetcher plans its next requests at
  once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.errors import LogTruncationError, NotAssignedError

from .fetch_state import FETCH_MOVES, FetchState
from .leader_epochs import EpochEnd

__all__ = ["PartitionState", "SubscriptionState"]


@dataclass(slots=True)
class PartitionState:
    """Where one assigned partition stands. Only :class:`SubscriptionState` writes it."""

    fetch_state: FetchState = FetchState.INITIALIZING
    position: int | None = None  # known while FETCHING or AWAIT_VALIDATION
    reset: str | None = None  # the policy while AWAIT_RESET: "earliest" / "latest" / "none"
    epoch: int = 0
    paused: bool = False
    revoking: bool = False  # being given up: no more fetching, nothing more handed out
    high_watermark: int = -1
    last_stable_offset: int = -1
    leader_epoch: int = -1  # of the record before the position: for commits and validation
    current_leader: tuple[int, int] | None = None  # (node id, leader epoch) checked against
    waiting: asyncio.Future[None] | None = None  # ends once the position is known

    @property
    def readable(self) -> bool:
        """Whether records of the partition may be fetched and handed out."""
        return not (self.paused or self.revoking)

    @property
    def fetchable(self) -> bool:
        """Whether the partition may be fetched now: positioned, validated, readable."""
        return self.fetch_state is FetchState.FETCHING and self.readable


def _name(tp: TopicPartition) -> str:
    return f"the fetch state of {tp.topic}/{tp.partition}"


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
        for tp, state in old.items():
            if tp not in self._partitions and state.waiting is not None:
                state.waiting.cancel()  # its waiter looks again and finds it unassigned
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

    def at_epoch(self, tp: TopicPartition, epoch: int) -> PartitionState | None:
        """``tp``'s state if it is still assigned at ``epoch`` (``None``: work that began at
        ``epoch`` is stale, see the module doc)."""
        state = self._partitions.get(tp)
        return state if state is not None and state.epoch == epoch else None

    def positioned(self, tp: TopicPartition) -> asyncio.Future[None]:
        """A future that ends once ``tp`` has a position (at once if it has one); it is
        cancelled if ``tp`` leaves the assignment first."""
        state = self.state(tp)
        if state.waiting is None or state.waiting.done():
            state.waiting = asyncio.get_running_loop().create_future()
            if state.fetch_state.has_position:
                state.waiting.set_result(None)
        return state.waiting

    def _move(
        self,
        tp: TopicPartition,
        state: PartitionState,
        new: FetchState,
        *,
        position: int | None = None,
        leader_epoch: int = -1,
        reset: str | None = None,
        current_leader: tuple[int, int] | None = None,
    ) -> None:
        """Move ``tp`` to ``new`` (a move of :data:`~.fetch_state.FETCH_MOVES`), with the
        position (or none) and what it was checked against: the epoch moves on."""
        FETCH_MOVES.check(state.fetch_state, new, _name(tp))
        state.fetch_state, state.reset = new, reset
        state.position, state.leader_epoch = position, leader_epoch
        state.current_leader = current_leader
        state.epoch += 1
        if new.has_position and state.waiting is not None and not state.waiting.done():
            state.waiting.set_result(None)

    def _move_in_place(
        self,
        tp: TopicPartition,
        state: PartitionState,
        new: FetchState,
        current_leader: tuple[int, int] | None,
    ) -> None:
        """Move ``tp`` to ``new`` at the position it has (to validate it, or validated)."""
        self._move(
            tp,
            state,
            new,
            position=state.position,
            leader_epoch=state.leader_epoch,
            current_leader=current_leader,
        )

    # --- the application's changes (each moves the epoch on) -------------------------------

    def seek(self, tp: TopicPartition, offset: int, leader_epoch: int = -1) -> None:
        """Read ``tp`` from ``offset`` on; ``leader_epoch`` (of the record before it, as a
        commit carries it) has the position validated against the leader's log first."""
        self._move(
            tp, self.state(tp), FetchState.FETCHING, position=offset, leader_epoch=leader_epoch
        )
        self._on_change()

    def request_reset(
        self, partitions: Iterable[TopicPartition], policy: str | None = None
    ) -> None:
        """Forget the positions of ``partitions``; the policy (by default the consumer's
        ``auto_offset_reset``) decides them again."""
        for tp in partitions:
            self._reset(tp, self.state(tp), policy)
        self._on_change()

    def _reset(self, tp: TopicPartition, state: PartitionState, policy: str | None) -> None:
        self._move(tp, state, FetchState.AWAIT_RESET, reset=policy or self.default_reset)

    def pause(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            self.state(tp).paused = True
        self._on_change()

    def resume(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            self.state(tp).paused = False
        self._on_change()

    def start_revoking(self, partitions: Collection[TopicPartition]) -> None:
        """Stop fetching ``partitions`` and handing out their records: the group takes them
        away once their positions are committed (they stay assigned until then)."""
        for tp in partitions:
            state = self._partitions.get(tp)
            if state is not None:
                state.revoking = True
        self._on_change()

    # --- what the background work found (each dropped if the epoch moved on) ---------------

    def committed_offset_found(
        self, tp: TopicPartition, epoch: int, offset: int | None, leader_epoch: int = -1
    ) -> None:
        """The group's committed offset of ``tp`` (``None``: it has none, and the reset
        policy decides); with the committed leader epoch, validated first where the broker
        can."""
        state = self.at_epoch(tp, epoch)
        if state is None:
            return
        if offset is None:
            self._reset(tp, state, None)
        else:
            self._move(tp, state, FetchState.FETCHING, position=offset, leader_epoch=leader_epoch)
        self._on_change()

    def reset_found(self, tp: TopicPartition, epoch: int, offset: int) -> bool:
        """The offset ``tp``'s reset policy names; whether it was taken."""
        state = self.at_epoch(tp, epoch)
        if state is None or state.fetch_state is not FetchState.AWAIT_RESET:
            return False
        self._move(tp, state, FetchState.FETCHING, position=offset)
        return True

    def reset_refused(self, tp: TopicPartition, epoch: int) -> None:
        """``tp``'s reset policy is ``"none"`` (the application has heard): it waits for a
        seek."""
        state = self.at_epoch(tp, epoch)
        if state is not None:
            self._move(tp, state, FetchState.INITIALIZING)

    def out_of_range(self, tp: TopicPartition, epoch: int) -> None:
        """The position is outside ``tp``'s log: the reset policy decides it again."""
        state = self.at_epoch(tp, epoch)
        if state is not None:
            self._reset(tp, state, None)
            self._on_change()

    def consumed(self, tp: TopicPartition, epoch: int, position: int, leader_epoch: int) -> None:
        """Records before ``position`` were handed out (or skipped)."""
        state = self.at_epoch(tp, epoch)
        if state is not None and state.fetch_state is FetchState.FETCHING:
            state.position, state.leader_epoch = position, leader_epoch

    def fetched(
        self, tp: TopicPartition, epoch: int, high_watermark: int, last_stable_offset: int
    ) -> None:
        """What a Fetch answer said of ``tp``'s log."""
        state = self.at_epoch(tp, epoch)
        if state is not None:
            state.high_watermark, state.last_stable_offset = high_watermark, last_stable_offset

    def fetchable(self) -> list[TopicPartition]:
        return [tp for tp, s in self._partitions.items() if s.fetchable]

    def positions(self) -> dict[TopicPartition, int]:
        return {tp: s.position for tp, s in self._partitions.items() if s.position is not None}

    def needing_reset(self) -> dict[TopicPartition, str]:
        return {tp: s.reset for tp, s in self._partitions.items() if s.reset is not None}

    def paused(self) -> set[TopicPartition]:
        return {tp for tp, s in self._partitions.items() if s.paused}

    # --- validation (KIP-320) -------------------------------------------------------------

    def leader_seen(
        self, tp: TopicPartition, epoch: int, leader: tuple[int, int], can_validate: bool
    ) -> bool:
        """The metadata names ``leader`` (node id, leader epoch) for ``tp``; whether its
        position must now be validated (it then drops what was fetched for it: the epoch
        moves on). A broker that ``can_validate`` not is believed as it is; ``True`` too
        if the epoch moved on meanwhile (the partition is looked at again)."""
        state = self.at_epoch(tp, epoch)
        if state is None:
            return True
        if state.current_leader == leader or not state.fetch_state.has_position:
            return state.fetch_state is FetchState.AWAIT_VALIDATION
        if can_validate and state.leader_epoch >= 0 and leader[1] >= 0:
            self._move_in_place(tp, state, FetchState.AWAIT_VALIDATION, leader)
        else:
            state.current_leader = leader  # believed as it is
        return state.fetch_state is FetchState.AWAIT_VALIDATION

    def needing_validation(self) -> list[TopicPartition]:
        return [
            tp for tp, s in self._partitions.items() if s.fetch_state is FetchState.AWAIT_VALIDATION
        ]

    def complete_validation(
        self, tp: TopicPartition, epoch: int, end: EpochEnd, *, diverged: bool = False
    ) -> LogTruncationError | None:
        """Apply the leader's answer for the position ``tp`` had at ``epoch``: go on if its log
        reaches the position; if it was cut below it, move to where it parts (or, when the
        leader knows nothing of the position's epoch, reset by the policy), or with
        ``auto_offset_reset="none"`` the error to report. ``diverged``: the answer is a Fetch's
        diverging epoch, which needs no validation to have been asked for."""
        state = self.at_epoch(tp, epoch)
        if state is None or not state.fetch_state.has_position:
            return None  # seeked, reset or unassigned meanwhile
        if not (state.fetch_state is FetchState.AWAIT_VALIDATION or diverged):
            return None
        assert state.position is not None
        if not end.undefined and end.end_offset >= state.position:
            if state.fetch_state is FetchState.AWAIT_VALIDATION:
                self._move_in_place(tp, state, FetchState.FETCHING, state.current_leader)
            return None
        if self.default_reset == "none":
            return LogTruncationError(tp, state.position, None if end.undefined else end.end_offset)
        if end.undefined:
            self._reset(tp, state, None)
        else:
            self._move(
                tp,
                state,
                FetchState.FETCHING,
                position=end.end_offset,
                leader_epoch=end.leader_epoch,
                current_leader=state.current_leader,  # validated against it: fetch at once
            )
        self._on_change()
        return None
