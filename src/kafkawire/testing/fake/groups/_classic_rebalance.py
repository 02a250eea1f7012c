"""The timed half of the classic protocol: when a rebalance starts, when it completes, who is
dropped on the way (Kafka's ``GroupMetadataManager``, classic part).

Rules, as Kafka's coordinator has them:

- A rebalance of a group coming from EMPTY waits ``group_initial_rebalance_delay_ms``, and
  again each time a new member arrived meanwhile, but no longer than the rebalance timeout;
  it does not end early when everyone has joined.
- Any other rebalance completes as soon as every known member has rejoined (and no member id
  handed out by MEMBER_ID_REQUIRED is still unused), or when the group's rebalance timeout
  (the largest of its members') passes: dynamic members that did not rejoin are then dropped,
  static ones kept, and a leader that did not rejoin is replaced by one that did.
- Completing bumps the generation, picks the protocol, answers every held JoinGroup (the
  leader with all members' metadata) and waits, again up to the rebalance timeout, for every
  member's SyncGroup; those that send none are dropped and the group rebalances.
- Each member's session restarts at every heartbeat, commit, join and sync answer; when it
  runs out, the member is dropped unless a held JoinGroup or SyncGroup stands for it. A member
  new in the current rebalance is only kept for Kafka's five minutes of a held first join.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from kafkawire.errors import RebalanceInProgressError, UnknownMemberIdError
from kafkawire.messages.join_group import v9 as join_group
from kafkawire.messages.sync_group import v5 as sync_group
from kafkawire.testing.fake.clock import Timers
from kafkawire.testing.fake.config import FakeConfig

from ._classic_group import ClassicGroup, ClassicMember
from ._classic_state import ClassicGroupState

__all__ = ["NEW_MEMBER_JOIN_TIMEOUT_MS", "ClassicRebalance"]

logger = logging.getLogger(__name__)

_S = ClassicGroupState

# Kafka's classicGroupNewMemberJoinTimeoutMs: how long a first JoinGroup may be held.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


class ClassicRebalance:
    """Rebalances and sessions of every classic group of one coordinator."""

    def __init__(self, timers: Timers, settings: FakeConfig) -> None:
        self._timers = timers
        self._settings = settings

    # -- sessions -----------------------------------------------------------------------------

    def reschedule_heartbeat(
        self, group: ClassicGroup, member_id: str, timeout_ms: int | None = None
    ) -> None:
        member = group.members.get(member_id)
        delay = timeout_ms if timeout_ms is not None else member.session_timeout_ms if member else 0
        self._timers.schedule(
            ("classic-session", group.group_id, member_id),
            delay,
            lambda: self._expire_heartbeat(group, member_id),
        )

    def schedule_pending_member(self, group: ClassicGroup, member_id: str, timeout_ms: int) -> None:
        """A member id handed out with MEMBER_ID_REQUIRED lives one session timeout unused."""
        self.reschedule_heartbeat(group, member_id, timeout_ms)

    def cancel_session(self, group: ClassicGroup, member_id: str) -> None:
        self._timers.cancel(("classic-session", group.group_id, member_id))

    def _expire_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        if group.state is _S.DEAD:
            return
        if member_id in group.pending_join:
            logger.info("group %s: pending member %s expired", group.group_id, member_id)
            group.pending_join.discard(member_id)
            if group.state is _S.PREPARING_REBALANCE and group.has_all_members_joined():
                self.complete_join(group)
            return
        member = group.members.get(member_id)
        if member is not None and not member.has_satisfied_heartbeat():
            logger.info("group %s: member %s's session expired", group.group_id, member_id)
            self.remove_member_and_update(group, member)

    def drop(self, group: ClassicGroup, member_id: str) -> None:
        """Take a member out: its session ends and anything it still waits for is answered
        UNKNOWN_MEMBER_ID (so no request of it is held for ever)."""
        self.cancel_session(group, member_id)
        member = group.members.get(member_id)
        if member is not None:
            unknown = UnknownMemberIdError.code
            group.complete_join(
                member, join_group.JoinGroupResponse(error_code=unknown, protocol_name=None)
            )
            group.complete_sync(member, sync_group.SyncGroupResponse(error_code=unknown))
        group.remove(member_id)

    def remove_member_and_update(self, group: ClassicGroup, member: ClassicMember) -> None:
        self.drop(group, member.member_id)
        if group.state in (_S.STABLE, _S.COMPLETING_REBALANCE):
            self.maybe_prepare_rebalance_or_complete_join(group, f"{member.member_id} left")
        elif group.state is _S.PREPARING_REBALANCE and group.has_all_members_joined():
            self.complete_join(group)

    # -- the join phase -----------------------------------------------------------------------

    def maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, reason: str) -> None:
        if group.can_rebalance():
            self.prepare_rebalance(group, reason)
        else:
            self.maybe_complete_join_phase(group)

    def prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.state is _S.COMPLETING_REBALANCE:
            self._reset_and_propagate_error(group, RebalanceInProgressError.code)
        self._remove_sync_expiration(group)
        initial = group.state is _S.EMPTY
        group.transition_to(_S.PREPARING_REBALANCE)
        logger.info(
            "group %s: rebalancing from generation %d (%s)",
            group.group_id,
            group.generation_id,
            reason,
        )
        if initial:
            delay = self._settings.group_initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule_initial(group, delay, remaining)
        elif group.has_all_members_joined():
            self.complete_join(group)
        else:
            self._schedule_join_timeout(group)

    def maybe_complete_join_phase(self, group: ClassicGroup) -> None:
        if (
            group.state is _S.PREPARING_REBALANCE
            and group.previous_state is not _S.EMPTY
            and group.has_all_members_joined()
        ):
            self.complete_join(group)

    def _schedule_join_timeout(self, group: ClassicGroup) -> None:
        self._timers.schedule(
            ("classic-join", group.group_id),
            group.rebalance_timeout_ms(),
            lambda: self._complete_join_if_alive(group),
        )

    def _schedule_initial(self, group: ClassicGroup, delay_ms: int, remaining_ms: int) -> None:
        self._timers.schedule(
            ("classic-join", group.group_id),
            delay_ms,
            lambda: self._initial_delay_passed(group, delay_ms, remaining_ms),
        )

    def _initial_delay_passed(self, group: ClassicGroup, delay_ms: int, remaining_ms: int) -> None:
        if group.state is _S.DEAD:
            return
        if group.new_member_added and remaining_ms != 0:
            group.new_member_added = False
            initial_delay = self._settings.group_initial_rebalance_delay_ms
            self._schedule_initial(
                group, min(initial_delay, remaining_ms), max(remaining_ms - delay_ms, 0)
            )
        else:
            self.complete_join(group)

    def _complete_join_if_alive(self, group: ClassicGroup) -> None:
        if group.state is not _S.DEAD:
            self.complete_join(group)

    def complete_join(self, group: ClassicGroup) -> None:
        """End the join phase: drop the dynamic members that did not rejoin, then start the
        next generation and answer every held JoinGroup."""
        self._timers.cancel(("classic-join", group.group_id))
        for member in [m for m in group.members.values() if not m.awaiting_join]:
            if member.group_instance_id is None:
                logger.info("group %s: %s did not rejoin", group.group_id, member.member_id)
                self.drop(group, member.member_id)
        if group.state is _S.DEAD:
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            # Nobody rejoined: wait another rebalance timeout, until sessions clear the rest.
            self._schedule_join_timeout(group)
            return
        group.init_next_generation()
        if group.state is _S.EMPTY:
            logger.info("group %s: generation %d is empty", group.group_id, group.generation_id)
            return
        logger.info(
            "group %s: generation %d with %d members, leader %s",
            group.group_id,
            group.generation_id,
            len(group.members),
            group.leader_id,
        )
        for member in group.members.values():
            answer = group.join_answer(member.member_id, members=group.is_leader(member.member_id))
            group.complete_join(member, answer)
            self.reschedule_heartbeat(group, member.member_id)
            member.is_new = False
            group.pending_sync.add(member.member_id)
        generation = group.generation_id
        self._timers.schedule(
            ("classic-sync", group.group_id),
            group.rebalance_timeout_ms(),
            lambda: self._expire_pending_sync(group, generation),
        )

    # -- the sync phase -----------------------------------------------------------------------

    def _expire_pending_sync(self, group: ClassicGroup, generation: int) -> None:
        if generation != group.generation_id or group.state not in (
            _S.COMPLETING_REBALANCE,
            _S.STABLE,
        ):
            return
        late = sorted(group.pending_sync)
        if not late:
            return
        for member_id in late:
            self.drop(group, member_id)
        self.prepare_rebalance(group, f"no SyncGroup from {', '.join(late)}")

    def _remove_sync_expiration(self, group: ClassicGroup) -> None:
        group.pending_sync.clear()
        self._timers.cancel(("classic-sync", group.group_id))

    def remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            self._timers.cancel(("classic-sync", group.group_id))

    def _reset_and_propagate_error(self, group: ClassicGroup, error_code: int) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate(group, error_code)

    def set_and_propagate_assignment(
        self, group: ClassicGroup, assignments: Mapping[str, bytes]
    ) -> None:
        for member in group.members.values():
            member.assignment = assignments.get(member.member_id, b"")
        self._propagate(group, 0)

    def _propagate(self, group: ClassicGroup, error_code: int) -> None:
        for member in group.members.values():
            answer = sync_group.SyncGroupResponse(
                error_code=error_code,
                protocol_type=group.protocol_type if error_code == 0 else None,
                protocol_name=group.protocol_name if error_code == 0 else None,
                assignment=member.assignment,
            )
            if group.complete_sync(member, answer):
                self.reschedule_heartbeat(group, member.member_id)

    def close(self, groups: list[ClassicGroup], error_code: int) -> None:
        """Answer every held request of ``groups`` with ``error_code`` (the cluster stops)."""
        for group in groups:
            for member in group.members.values():
                group.complete_join(
                    member,
                    join_group.JoinGroupResponse(
                        error_code=error_code, member_id=member.member_id, protocol_name=None
                    ),
                )
                group.complete_sync(member, sync_group.SyncGroupResponse(error_code=error_code))
