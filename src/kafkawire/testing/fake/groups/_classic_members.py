"""SyncGroup (v0-5), Heartbeat (v0-4) and LeaveGroup (v0-5) for classic groups, as Kafka's
coordinator answers them.

- SyncGroup: from v5 the protocol type and name are required (else
  INCONSISTENT_GROUP_PROTOCOL). An unknown group, or one without members, is
  UNKNOWN_MEMBER_ID; then the member (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID), the generation
  (ILLEGAL_GENERATION) and the protocol are checked. While the group prepares a rebalance the
  answer is REBALANCE_IN_PROGRESS; while it completes one, followers are held until the
  leader's SyncGroup brings the assignment (members it leaves out get an empty one); in a
  Stable group each member gets its assignment at once.
- Heartbeat: the same member and generation checks; REBALANCE_IN_PROGRESS while the group
  prepares a rebalance (the signal to rejoin); UNKNOWN_MEMBER_ID in an Empty group. Each
  accepted heartbeat restarts the member's session.
- LeaveGroup: from v3 a batch of members, each by member id or (for an administrator) by
  group instance id alone, each answered on its own; before v3 one member, whose error is
  the response's. Leaving starts a rebalance, or lets a pending one complete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from kafkawire.errors import (
    BrokerError,
    CoordinatorNotAvailableError,
    IllegalGenerationError,
    InconsistentGroupProtocolError,
    RebalanceInProgressError,
    UnknownMemberIdError,
)
from kafkawire.messages.leave_group import v5 as leave_group
from kafkawire.messages.sync_group import v5 as sync_group

from ._classic_group import ClassicGroup
from ._classic_rebalance import ClassicRebalance
from ._classic_state import ClassicGroupState

__all__ = ["ClassicMembers", "LeavingMember"]

_S = ClassicGroupState
_MANDATORY_PROTOCOL_VERSION = 5


@dataclass(frozen=True, slots=True)
class LeavingMember:
    """One member a LeaveGroup names (a v0-2 request names exactly one)."""

    member_id: str
    group_instance_id: str | None = None


def _answer(response: sync_group.SyncGroupResponse) -> asyncio.Future[sync_group.SyncGroupResponse]:
    future: asyncio.Future[sync_group.SyncGroupResponse] = (
        asyncio.get_running_loop().create_future()
    )
    future.set_result(response)
    return future


def _inconsistent(requested: str | None, actual: str | None) -> bool:
    return requested is not None and actual is not None and requested != actual


class ClassicMembers:
    """SyncGroup, Heartbeat and LeaveGroup for the classic groups of one coordinator."""

    def __init__(self, rebalance: ClassicRebalance) -> None:
        self._rebalance = rebalance

    def sync(
        self, group: ClassicGroup | None, request: sync_group.SyncGroupRequest, version: int
    ) -> asyncio.Future[sync_group.SyncGroupResponse]:
        """The answer to ``request`` (normalized to v5), held while the leader's is awaited."""
        if version >= _MANDATORY_PROTOCOL_VERSION and (
            request.protocol_type is None or request.protocol_name is None
        ):
            return _answer(
                sync_group.SyncGroupResponse(error_code=InconsistentGroupProtocolError.code)
            )
        if group is None or group.is_empty():
            return _answer(sync_group.SyncGroupResponse(error_code=UnknownMemberIdError.code))
        try:
            self._validate_sync(group, request)
        except BrokerError as error:
            return _answer(sync_group.SyncGroupResponse(error_code=error.code))
        member = group.members[request.member_id]
        if group.state is _S.PREPARING_REBALANCE:
            return _answer(sync_group.SyncGroupResponse(error_code=RebalanceInProgressError.code))
        if group.state is _S.COMPLETING_REBALANCE:
            waiter = member.wait_for_sync()
            self._rebalance.remove_pending_sync_member(group, member.member_id)
            if group.is_leader(member.member_id):
                assignments = {a.member_id: a.assignment for a in request.assignments}
                self._rebalance.set_and_propagate_assignment(group, assignments)
                group.transition_to(_S.STABLE)
            return waiter
        self._rebalance.remove_pending_sync_member(group, member.member_id)
        return _answer(
            sync_group.SyncGroupResponse(
                protocol_type=group.protocol_type,
                protocol_name=group.protocol_name,
                assignment=member.assignment,
            )
        )

    @staticmethod
    def _validate_sync(group: ClassicGroup, request: sync_group.SyncGroupRequest) -> None:
        if group.state is _S.DEAD:
            raise CoordinatorNotAvailableError(f"group {group.group_id} is dead")
        group.validate_member(request.member_id, request.group_instance_id)
        if request.generation_id != group.generation_id:
            raise IllegalGenerationError(
                f"group {group.group_id} is at generation {group.generation_id}"
            )
        if _inconsistent(request.protocol_type, group.protocol_type) or _inconsistent(
            request.protocol_name, group.protocol_name
        ):
            raise InconsistentGroupProtocolError(f"group {group.group_id} uses another protocol")

    def heartbeat(
        self,
        group: ClassicGroup | None,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
    ) -> int:
        """The error code a Heartbeat is answered with (0: carry on)."""
        if group is None:
            return UnknownMemberIdError.code
        if group.state is _S.DEAD:
            return CoordinatorNotAvailableError.code
        try:
            group.validate_member(member_id, group_instance_id)
        except BrokerError as error:
            return error.code
        if generation_id != group.generation_id:
            return IllegalGenerationError.code
        if group.state is _S.EMPTY:
            return UnknownMemberIdError.code
        self._rebalance.reschedule_heartbeat(group, member_id)
        if group.state is _S.PREPARING_REBALANCE:
            return RebalanceInProgressError.code
        return 0

    def leave(
        self, group: ClassicGroup | None, leaving: Sequence[LeavingMember]
    ) -> leave_group.LeaveGroupResponse:
        """The answer to a LeaveGroup (at v5: one result per member)."""
        if group is None:
            return leave_group.LeaveGroupResponse(
                members=tuple(
                    leave_group.MemberResponse(
                        member_id=m.member_id,
                        group_instance_id=m.group_instance_id,
                        error_code=UnknownMemberIdError.code,
                    )
                    for m in leaving
                )
            )
        if group.state is _S.DEAD:
            return leave_group.LeaveGroupResponse(error_code=CoordinatorNotAvailableError.code)
        results = tuple(self._leave_one(group, m) for m in leaving)
        if any(r.error_code == 0 for r in results):
            if group.state in (_S.STABLE, _S.COMPLETING_REBALANCE):
                self._rebalance.maybe_prepare_rebalance_or_complete_join(group, "members left")
            elif group.state is _S.PREPARING_REBALANCE:
                self._rebalance.maybe_complete_join_phase(group)
        return leave_group.LeaveGroupResponse(members=results)

    def _leave_one(self, group: ClassicGroup, leaving: LeavingMember) -> leave_group.MemberResponse:
        error = 0
        if not leaving.member_id:
            # An administrator removes a static member by its instance id alone.
            instance = leaving.group_instance_id
            known = group.static_members.get(instance) if instance is not None else None
            if known is None:
                error = UnknownMemberIdError.code
            else:
                self._rebalance.drop(group, known)
        elif leaving.member_id in group.pending_join:
            group.pending_join.discard(leaving.member_id)
            self._rebalance.cancel_session(group, leaving.member_id)
        else:
            try:
                group.validate_member(leaving.member_id, leaving.group_instance_id)
            except BrokerError as failure:
                error = failure.code
            else:
                self._rebalance.drop(group, leaving.member_id)
        return leave_group.MemberResponse(
            member_id=leaving.member_id,
            group_instance_id=leaving.group_instance_id,
            error_code=error,
        )
