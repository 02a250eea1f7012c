"""JoinGroup (v0-9) for classic groups, as Kafka's coordinator answers it.

- A member without a member id gets one: from v4 a dynamic member is answered
  MEMBER_ID_REQUIRED with it at once and must join again with it (KIP-394; the id is kept
  apart, outside the group, for one session timeout); a static member (group instance id,
  KIP-345) is let in directly, and one whose instance id is known replaces the old member id:
  in a Stable group whose chosen protocol stays the same, without a rebalance (the old id's
  held requests are answered FENCED_INSTANCE_ID).
- A known member: in PreparingRebalance its JoinGroup is held; in CompletingRebalance with the
  same metadata it gets the current generation again, with new metadata it starts a new
  rebalance; in Stable the leader and any member with new metadata start one, the others get
  the current generation.
- A session timeout outside the configured range is INVALID_SESSION_TIMEOUT; protocols none of
  which every member supports are INCONSISTENT_GROUP_PROTOCOL; a member id the group does not
  know is UNKNOWN_MEMBER_ID, an instance id mapped to another member FENCED_INSTANCE_ID.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from kafkawire.errors import (
    BrokerError,
    CoordinatorNotAvailableError,
    InconsistentGroupProtocolError,
    MemberIdRequiredError,
    UnknownMemberIdError,
    UnknownServerError,
)
from kafkawire.messages.join_group import v9 as join_group

from ._classic_group import ClassicGroup, ClassicMember, Protocols
from ._classic_rebalance import NEW_MEMBER_JOIN_TIMEOUT_MS, ClassicRebalance
from ._classic_state import ClassicGroupState

__all__ = ["ClassicJoin", "Joiner"]

logger = logging.getLogger(__name__)

_S = ClassicGroupState
# The first JoinGroup version that must carry a member id (KIP-394), and that may be told to
# skip the assignment (a static leader rejoining a Stable group, KIP-814).
_MEMBER_ID_REQUIRED_VERSION = 4
_SKIP_ASSIGNMENT_VERSION = 9

Joiner = tuple[str, str]  # (client id, client host) of the connection that sent the request


def _answer(response: join_group.JoinGroupResponse) -> asyncio.Future[join_group.JoinGroupResponse]:
    future: asyncio.Future[join_group.JoinGroupResponse] = (
        asyncio.get_running_loop().create_future()
    )
    future.set_result(response)
    return future


def _error(member_id: str, error: BrokerError) -> asyncio.Future[join_group.JoinGroupResponse]:
    return _answer(
        join_group.JoinGroupResponse(error_code=error.code, member_id=member_id, protocol_name=None)
    )


class ClassicJoin:
    """Handles JoinGroup for the classic groups of one coordinator."""

    def __init__(self, rebalance: ClassicRebalance) -> None:
        self._rebalance = rebalance

    def join(
        self,
        group: ClassicGroup,
        request: join_group.JoinGroupRequest,
        version: int,
        joiner: Joiner,
    ) -> asyncio.Future[join_group.JoinGroupResponse]:
        """The answer to ``request`` (normalized to v9), possibly held until the rebalance
        completes."""
        member_id = request.member_id
        if group.state is _S.DEAD:
            return _error(member_id, CoordinatorNotAvailableError())
        protocols: Protocols = tuple((p.name, p.metadata) for p in request.protocols)
        if not group.supports_protocols(request.protocol_type, (name for name, _ in protocols)):
            return _error(member_id, InconsistentGroupProtocolError())
        if not member_id:
            return self._join_new_member(group, request, protocols, version, joiner)
        if member_id in group.pending_join:
            if request.group_instance_id is not None:
                return _error(member_id, UnknownServerError("a pending member cannot be static"))
            return self._add_member(group, request, protocols, member_id, joiner)
        try:
            member = group.validate_member(member_id, request.group_instance_id)
        except BrokerError as error:
            return _error(member_id, error)
        return self._join_existing_member(group, member, request, protocols)

    def _join_new_member(
        self,
        group: ClassicGroup,
        request: join_group.JoinGroupRequest,
        protocols: Protocols,
        version: int,
        joiner: Joiner,
    ) -> asyncio.Future[join_group.JoinGroupResponse]:
        instance_id = request.group_instance_id
        new_id = ClassicGroup.new_member_id(joiner[0], instance_id)
        if instance_id is not None:
            old_id = group.static_members.get(instance_id)
            if old_id is not None:
                return self._replace_static_member(
                    group, request, protocols, ids=(old_id, new_id), version=version
                )
            return self._add_member(group, request, protocols, new_id, joiner)
        if version >= _MEMBER_ID_REQUIRED_VERSION:
            group.pending_join.add(new_id)
            self._rebalance.schedule_pending_member(group, new_id, request.session_timeout_ms)
            logger.info("group %s: new member id %s, to join with", group.group_id, new_id)
            return _answer(
                join_group.JoinGroupResponse(
                    error_code=MemberIdRequiredError.code, member_id=new_id, protocol_name=None
                )
            )
        return self._add_member(group, request, protocols, new_id, joiner)

    def _add_member(
        self,
        group: ClassicGroup,
        request: join_group.JoinGroupRequest,
        protocols: Protocols,
        member_id: str,
        joiner: Joiner,
    ) -> asyncio.Future[join_group.JoinGroupResponse]:
        member = ClassicMember(
            member_id=member_id,
            group_instance_id=request.group_instance_id,
            client_id=joiner[0],
            client_host=joiner[1],
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            session_timeout_ms=request.session_timeout_ms,
            protocol_type=request.protocol_type,
            protocols=protocols,
            is_new=True,
        )
        waiter = member.wait_for_join()
        if group.state is _S.PREPARING_REBALANCE and group.previous_state is _S.EMPTY:
            group.new_member_added = True
        group.add(member)
        # A new member cannot heartbeat while its first JoinGroup is held: give it Kafka's
        # new-member join timeout instead of its session.
        self._rebalance.reschedule_heartbeat(group, member_id, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._rebalance.maybe_prepare_rebalance_or_complete_join(
            group, f"new member {member_id} joined"
        )
        return waiter

    @staticmethod
    def _update_member(
        member: ClassicMember, request: join_group.JoinGroupRequest, protocols: Protocols
    ) -> asyncio.Future[join_group.JoinGroupResponse]:
        waiter = member.wait_for_join()
        member.protocols = protocols
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.session_timeout_ms = request.session_timeout_ms
        return waiter

    def _join_existing_member(
        self,
        group: ClassicGroup,
        member: ClassicMember,
        request: join_group.JoinGroupRequest,
        protocols: Protocols,
    ) -> asyncio.Future[join_group.JoinGroupResponse]:
        member_id = member.member_id
        if group.state is _S.PREPARING_REBALANCE:
            waiter = self._update_member(member, request, protocols)
            self._rebalance.maybe_prepare_rebalance_or_complete_join(group, f"{member_id} rejoined")
            return waiter
        if group.state is _S.COMPLETING_REBALANCE and member.matches(protocols):
            # The same metadata again (its answer was lost): the current generation again.
            return _answer(group.join_answer(member_id, members=group.is_leader(member_id)))
        if (
            group.state is _S.STABLE
            and not group.is_leader(member_id)
            and member.matches(protocols)
        ):
            return _answer(group.join_answer(member_id, members=False))
        if group.state in (_S.COMPLETING_REBALANCE, _S.STABLE):
            waiter = self._update_member(member, request, protocols)
            self._rebalance.maybe_prepare_rebalance_or_complete_join(
                group, f"{member_id} joined with new metadata (or is the leader)"
            )
            return waiter
        # An Empty group has no members, so no known member can be here; answer as Kafka does.
        return _error(member_id, UnknownMemberIdError())

    def _replace_static_member(
        self,
        group: ClassicGroup,
        request: join_group.JoinGroupRequest,
        protocols: Protocols,
        *,
        ids: tuple[str, str],
        version: int,
    ) -> asyncio.Future[join_group.JoinGroupResponse]:
        old_id, new_id = ids
        instance_id = request.group_instance_id
        assert instance_id is not None
        leader_before = group.leader_id
        member = group.replace_static_member(instance_id, old_id, new_id)
        self._rebalance.reschedule_heartbeat(group, new_id)
        self._rebalance.cancel_session(group, old_id)
        logger.info("group %s: static member %s is now %s", group.group_id, instance_id, new_id)
        waiter = self._update_member(member, request, protocols)
        if group.state is _S.STABLE:
            if group.protocol_name == group.select_protocol():
                # Nothing changed for the group: the new id takes the old one's place. The
                # leader is told the old leader id (so it does not assign again), unless it
                # may be told to skip the assignment (v9).
                leader = group.is_leader(new_id)
                if version >= _SKIP_ASSIGNMENT_VERSION:
                    answer = replace(
                        group.join_answer(new_id, members=leader), skip_assignment=leader
                    )
                else:
                    answer = replace(
                        group.join_answer(new_id, members=False), leader=leader_before or ""
                    )
                group.complete_join(member, answer)
                return waiter
            self._rebalance.maybe_prepare_rebalance_or_complete_join(
                group, f"static member {instance_id} rejoined with another protocol"
            )
        elif group.state is _S.COMPLETING_REBALANCE:
            self._rebalance.prepare_rebalance(group, f"static member {instance_id} rejoined")
        else:
            self._rebalance.maybe_complete_join_phase(group)
        return waiter
