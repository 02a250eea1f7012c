"""A classic group's bookkeeping (Kafka's ``ClassicGroup`` and ``ClassicGroupMember``).

Members, the static members' instance ids, the members Kafka holds apart (KIP-394 member ids
handed out but not yet used to join; members yet to send their SyncGroup), the protocol vote,
and who waits for which answer. What happens when (the rebalance itself, its timers) is
:mod:`._classic_rebalance`'s; this module only keeps the facts consistent.

A member "awaits join" while its JoinGroup is held and "awaits sync" while its SyncGroup is;
the held request is an ``asyncio.Future`` resolved with the newest version of the response
(the coordinator converts it to the request's version). A request whose client went away keeps
its future (shielded), so the member still counts as waiting, as on a broker whose socket
closed under a parked request.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from kafkawire.errors import (
    CoordinatorNotAvailableError,
    DecodeError,
    FencedInstanceIdError,
    IllegalGenerationError,
    RebalanceInProgressError,
    UnknownMemberIdError,
)
from kafkawire.messages.join_group import v9 as join_group
from kafkawire.messages.sync_group import v5 as sync_group
from kafkawire.operations.member_data import decode_subscription

from ._classic_state import TRANSITIONS, ClassicGroupState, check_transition

__all__ = ["CONSUMER_PROTOCOL_TYPE", "ClassicGroup", "ClassicMember", "Protocols"]

logger = logging.getLogger(__name__)

CONSUMER_PROTOCOL_TYPE = "consumer"

# A member's protocols in its order of preference: (name, metadata).
Protocols = tuple[tuple[str, bytes], ...]

_S = ClassicGroupState
_R = TypeVar("_R")


def _resolve(waiter: asyncio.Future[_R] | None, response: _R) -> bool:
    """Answer a held request (one whose client went away keeps its answer); False if there
    is none."""
    if waiter is None:
        return False
    if not waiter.done():
        waiter.set_result(response)
    return True


@dataclass(eq=False)
class ClassicMember:
    """One member of a classic group."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    assignment: bytes = b""
    join_waiter: asyncio.Future[join_group.JoinGroupResponse] | None = None
    sync_waiter: asyncio.Future[sync_group.SyncGroupResponse] | None = None
    # Joined during this rebalance: its session does not count until the join completes.
    is_new: bool = False

    @property
    def awaiting_join(self) -> bool:
        return self.join_waiter is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_waiter is not None

    def wait_for_join(self) -> asyncio.Future[join_group.JoinGroupResponse]:
        """A new held JoinGroup. One still held is answered REBALANCE_IN_PROGRESS: Kafka drops
        a superseded request unanswered (its client gave up on it), which would hold it here
        for ever."""
        _resolve(
            self.join_waiter,
            join_group.JoinGroupResponse(
                error_code=RebalanceInProgressError.code,
                member_id=self.member_id,
                protocol_name=None,
            ),
        )
        self.join_waiter = asyncio.get_running_loop().create_future()
        return self.join_waiter

    def wait_for_sync(self) -> asyncio.Future[sync_group.SyncGroupResponse]:
        """A new held SyncGroup (one still held is answered as in :meth:`wait_for_join`)."""
        _resolve(
            self.sync_waiter,
            sync_group.SyncGroupResponse(error_code=RebalanceInProgressError.code),
        )
        self.sync_waiter = asyncio.get_running_loop().create_future()
        return self.sync_waiter

    def has_satisfied_heartbeat(self) -> bool:
        """Whether the member may outlive its session deadline: a held JoinGroup or SyncGroup
        stands for heartbeats, except for a member new in this rebalance."""
        return not self.is_new and (self.awaiting_join or self.awaiting_sync)

    def metadata(self, protocol: str | None) -> bytes:
        return next((data for name, data in self.protocols if name == protocol), b"")

    def vote(self, candidates: frozenset[str]) -> str:
        """The member's most preferred protocol among ``candidates``."""
        return next(name for name, _ in self.protocols if name in candidates)

    def matches(self, protocols: Protocols) -> bool:
        return self.protocols == protocols


class ClassicGroup:
    """A classic group: state, generation, members and the protocol they agreed on."""

    kind = "classic"

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.state = _S.EMPTY
        self.previous_state = _S.EMPTY
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, ClassicMember] = {}
        self.static_members: dict[str, str] = {}
        self.pending_join: set[str] = set()
        self.pending_sync: set[str] = set()
        # A member joined during the initial rebalance's delay: wait one delay more.
        self.new_member_added = False

    # -- state --------------------------------------------------------------------------------

    def transition_to(self, target: ClassicGroupState) -> None:
        check_transition(self.group_id, self.state, target)
        logger.debug("classic group %s: %s -> %s", self.group_id, self.state.value, target.value)
        self.previous_state, self.state = self.state, target

    def can_rebalance(self) -> bool:
        return TRANSITIONS.allows(self.state, _S.PREPARING_REBALANCE)

    def is_empty(self) -> bool:
        return self.state is _S.EMPTY

    # -- members ------------------------------------------------------------------------------

    @staticmethod
    def new_member_id(client_id: str, group_instance_id: str | None) -> str:
        """Kafka's form: the instance id (or the client id), a dash, a random uuid."""
        prefix = group_instance_id if group_instance_id is not None else client_id
        return f"{prefix}-{uuid.uuid4()}"

    def add(self, member: ClassicMember) -> None:
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self.pending_join.discard(member.member_id)

    def remove(self, member_id: str) -> ClassicMember | None:
        member = self.members.pop(member_id, None)
        if member is not None and member.group_instance_id is not None:
            self.static_members.pop(member.group_instance_id, None)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_join.discard(member_id)
        self.pending_sync.discard(member_id)
        return member

    def replace_static_member(self, instance_id: str, old_id: str, new_id: str) -> ClassicMember:
        """The static member ``old_id`` under a new member id, everything else kept; whatever
        the old id still waits for is answered FENCED_INSTANCE_ID."""
        old = self.members.pop(old_id)
        fenced = FencedInstanceIdError.code
        self.complete_join(
            old,
            join_group.JoinGroupResponse(error_code=fenced, member_id=old_id, protocol_name=None),
        )
        self.complete_sync(old, sync_group.SyncGroupResponse(error_code=fenced))
        new = replace(old, member_id=new_id, join_waiter=None, sync_waiter=None, is_new=False)
        self.members[new_id] = new
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        if self.leader_id == old_id:
            self.leader_id = new_id
        self.static_members[instance_id] = new_id
        return new

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def validate_member(self, member_id: str, group_instance_id: str | None) -> ClassicMember:
        """The member, or UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID as Kafka answers them."""
        if group_instance_id is not None:
            known = self.static_members.get(group_instance_id)
            if known is None:
                raise UnknownMemberIdError(
                    f"group {self.group_id}: no static member {group_instance_id}"
                )
            if known != member_id:
                raise FencedInstanceIdError(
                    f"group {self.group_id}: instance {group_instance_id} is member {known}, "
                    f"not {member_id}"
                )
        member = self.members.get(member_id)
        if member is None:
            raise UnknownMemberIdError(f"group {self.group_id}: no member {member_id!r}")
        return member

    def has_all_members_joined(self) -> bool:
        return all(m.awaiting_join for m in self.members.values()) and not self.pending_join

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else take any member that did; False if none did."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].awaiting_join:
            return True
        joined = next((m for m in self.members.values() if m.awaiting_join), None)
        if joined is None:
            return False
        self.leader_id = joined.member_id
        return True

    # -- protocols ----------------------------------------------------------------------------

    def _candidate_protocols(self) -> frozenset[str]:
        counts = Counter(name for m in self.members.values() for name, _ in m.protocols)
        return frozenset(name for name, n in counts.items() if n == len(self.members))

    def supports_protocols(self, protocol_type: str, names: Iterable[str]) -> bool:
        names = list(names)
        if self.state is _S.EMPTY:
            return bool(protocol_type) and bool(names)
        candidates = self._candidate_protocols()
        return self.protocol_type == protocol_type and any(n in candidates for n in names)

    def select_protocol(self) -> str:
        """Each member votes for its favourite protocol all members support; most votes win
        (ties go to the name first in order, so the choice is reproducible)."""
        candidates = self._candidate_protocols()
        votes = Counter(m.vote(candidates) for m in self.members.values())
        return max(sorted(votes), key=lambda name: votes[name])

    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition_to(_S.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.transition_to(_S.EMPTY)
        self.pending_sync.clear()

    def join_members(self) -> Sequence[join_group.JoinGroupResponseMember]:
        """Every member's metadata for the chosen protocol: what the leader is given."""
        return tuple(
            join_group.JoinGroupResponseMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                metadata=m.metadata(self.protocol_name),
            )
            for m in self.members.values()
        )

    def join_answer(self, member_id: str, *, members: bool) -> join_group.JoinGroupResponse:
        """The current generation as ``member_id`` is told it (with the members if asked)."""
        return join_group.JoinGroupResponse(
            generation_id=self.generation_id,
            protocol_type=self.protocol_type,
            protocol_name=self.protocol_name,
            leader=self.leader_id or "",
            member_id=member_id,
            members=tuple(self.join_members()) if members else (),
        )

    # -- held requests ------------------------------------------------------------------------

    @staticmethod
    def complete_join(member: ClassicMember, response: join_group.JoinGroupResponse) -> bool:
        """Answer the member's held JoinGroup, if it has one (whether it did is returned)."""
        waiter, member.join_waiter = member.join_waiter, None
        return _resolve(waiter, response)

    @staticmethod
    def complete_sync(member: ClassicMember, response: sync_group.SyncGroupResponse) -> bool:
        """Answer the member's held SyncGroup, if it has one (whether it did is returned)."""
        waiter, member.sync_waiter = member.sync_waiter, None
        return _resolve(waiter, response)

    # -- offsets ------------------------------------------------------------------------------

    def subscribed_topics(self) -> frozenset[str] | None:
        """The topics the members subscribe to, read from their consumer-protocol metadata;
        ``None`` when that cannot be known (another protocol type, metadata that does not
        parse, no protocol chosen yet)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return frozenset()
        if self.protocol_name is None:
            return None
        try:
            return frozenset(
                topic
                for m in self.members.values()
                for topic in decode_subscription(m.metadata(self.protocol_name)).topics
            )
        except DecodeError:
            return None

    def is_subscribed_to(self, topic: str) -> bool:
        topics = self.subscribed_topics()
        if topics is None:
            return self.protocol_type == CONSUMER_PROTOCOL_TYPE
        return topic in topics

    def validate_offset_commit(
        self,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        *,
        transactional: bool,
    ) -> ClassicMember | None:
        """Kafka's checks of a commit to a classic group; the committing member, if any."""
        if self.state is _S.DEAD:
            raise CoordinatorNotAvailableError(f"group {self.group_id} is dead")
        if generation_id < 0 and self.state is _S.EMPTY:
            return None  # the admin client, or a consumer without group management
        member = None
        if generation_id >= 0 or member_id or group_instance_id is not None:
            member = self.validate_member(member_id, group_instance_id)
            if generation_id != self.generation_id:
                raise IllegalGenerationError(
                    f"group {self.group_id} is at generation {self.generation_id}, "
                    f"not {generation_id}"
                )
        elif not transactional and self.state is not _S.EMPTY:
            raise UnknownMemberIdError(f"group {self.group_id} has members: a commit must name one")
        if not transactional and self.state is _S.COMPLETING_REBALANCE:
            raise RebalanceInProgressError(f"group {self.group_id} is completing a rebalance")
        return member
