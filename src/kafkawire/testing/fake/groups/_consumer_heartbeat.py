"""ConsumerGroupHeartbeat (v0-1, KIP-848), as Kafka's coordinator answers it.

One heartbeat, in order:

1. Validate: a group id; from v1 a member id always (KIP-1082: the client makes it), in v0
   from epoch 1 (at epoch 0 the coordinator makes one); at epoch 0 a rebalance timeout, an
   empty list of owned partitions, and topic names or a regular expression; epoch -2 only
   with an instance id; a known server assignor; a regular expression that compiles.
2. Epoch -1 leaves (the member is removed, the group epoch bumped); -2 leaves a static member's
   place open (it keeps its partitions until its session expires or it rejoins).
3. Find the member: epoch 0 creates it (a static member whose instance id left with -2 is
   replaced, keeping its partitions; one still active is UNRELEASED_INSTANCE_ID); otherwise
   UNKNOWN_MEMBER_ID if unknown, FENCED_MEMBER_EPOCH if its epoch is neither the current one
   nor (with owned partitions within its assignment) the previous one.
4. Update its subscription; a change of names, regular expression or what they resolve to
   bumps the group epoch, and a group epoch ahead of the target assignment's recomputes it.
5. Reconcile the member towards its target (:mod:`._reconcile`); a member that must revoke
   gets its rebalance timeout to do it, or is fenced.
6. Restart its session; answer its epoch, the heartbeat interval, and its assignment when the
   request was a full one (joining, or with every field) or the assignment changed.
"""

from __future__ import annotations

import logging
import re
import uuid
from dataclasses import replace

from kafkawire.errors import (
    BrokerError,
    FencedInstanceIdError,
    FencedMemberEpochError,
    InvalidRegularExpressionError,
    InvalidRequestError,
    UnknownMemberIdError,
    UnreleasedInstanceIdError,
    UnsupportedAssignorError,
)
from kafkawire.messages.consumer_group_heartbeat import v1 as cgh

from ._assignors import ASSIGNORS
from ._consumer_group import ConsumerGroup
from ._consumer_member import (
    LEAVE_EPOCH,
    STATIC_LEAVE_EPOCH,
    ConsumerMember,
    Partitions,
)
from ._member_state import MemberState
from ._modern import Heartbeats, by_topic, member_left, refresh_epoch
from ._reconcile import reconcile

__all__ = ["ConsumerHeartbeats"]

logger = logging.getLogger(__name__)

_CLIENT_MEMBER_ID_VERSION = 1


def _owned(request: cgh.ConsumerGroupHeartbeatRequest) -> Partitions | None:
    if request.topic_partitions is None:
        return None
    return frozenset((t.topic_id, p) for t in request.topic_partitions for p in t.partitions)


def _assignment(partitions: Partitions) -> cgh.Assignment:
    return cgh.Assignment(
        topic_partitions=tuple(
            cgh.ConsumerGroupHeartbeatResponseTopicPartitions(topic_id=t, partitions=tuple(ps))
            for t, ps in by_topic(partitions).items()
        )
    )


class ConsumerHeartbeats(Heartbeats[ConsumerGroup]):
    """ConsumerGroupHeartbeat for the KIP-848 groups of one coordinator."""

    def heartbeat(
        self,
        request: cgh.ConsumerGroupHeartbeatRequest,
        version: int,
        client: tuple[str, str],
    ) -> cgh.ConsumerGroupHeartbeatResponse:
        """The answer to ``request`` (normalized to v1)."""
        try:
            self._validate(request, version)
            if request.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
                return self._leave(request)
            return self._heartbeat(request, client)
        except BrokerError as error:
            return cgh.ConsumerGroupHeartbeatResponse(
                error_code=error.code, error_message=error.message
            )

    @staticmethod
    def _validate(request: cgh.ConsumerGroupHeartbeatRequest, version: int) -> None:
        def blank(value: str | None) -> bool:
            return value is not None and not value.strip()

        epoch = request.member_epoch
        if (version >= _CLIENT_MEMBER_ID_VERSION or epoch > 0 or epoch == LEAVE_EPOCH) and (
            not request.member_id.strip()
        ):
            raise InvalidRequestError("MemberId can't be empty.")
        for name, value in (
            ("GroupId", request.group_id),
            ("InstanceId", request.instance_id),
            ("RackId", request.rack_id),
        ):
            if blank(value):
                raise InvalidRequestError(f"{name} can't be empty.")
        if epoch == 0:
            if request.rebalance_timeout_ms == -1:
                raise InvalidRequestError("RebalanceTimeoutMs must be provided in first request.")
            if request.topic_partitions is None or request.topic_partitions:
                raise InvalidRequestError("TopicPartitions must be empty when (re-)joining.")
            if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                raise InvalidRequestError(
                    "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
                    "(re-)joining."
                )
        elif epoch == STATIC_LEAVE_EPOCH:
            if request.instance_id is None:
                raise InvalidRequestError("InstanceId can't be null.")
        elif epoch < STATIC_LEAVE_EPOCH:
            raise InvalidRequestError("MemberEpoch is invalid.")
        if request.server_assignor is not None and request.server_assignor not in ASSIGNORS:
            raise UnsupportedAssignorError(
                f"ServerAssignor {request.server_assignor} is not supported. "
                f"Supported assignors: {', '.join(ASSIGNORS)}."
            )
        if request.subscribed_topic_regex:
            try:
                re.compile(request.subscribed_topic_regex)
            except re.error as error:
                raise InvalidRegularExpressionError(
                    f"SubscribedTopicRegex {request.subscribed_topic_regex!r} is invalid: {error}"
                ) from None

    # -- leaving ------------------------------------------------------------------------------

    def _leave(
        self, request: cgh.ConsumerGroupHeartbeatRequest
    ) -> cgh.ConsumerGroupHeartbeatResponse:
        group = self._group_for(request.group_id, False)
        if request.instance_id is None:
            member = group.member(request.member_id)
        else:
            member = self._static_member(group, request.instance_id, request.member_id)
            if request.member_epoch == STATIC_LEAVE_EPOCH:
                # The place stays open: the member keeps its assigned partitions (until its
                # session expires or it rejoins), and gives up what it was revoking.
                group.put_member(
                    replace(member, member_epoch=STATIC_LEAVE_EPOCH, pending_revocation=frozenset())
                )
                logger.info(
                    "group %s: static member %s left for now", group.group_id, member.member_id
                )
                return cgh.ConsumerGroupHeartbeatResponse(
                    member_id=member.member_id, member_epoch=STATIC_LEAVE_EPOCH
                )
        logger.info("group %s: member %s left", group.group_id, member.member_id)
        self.fence(group, member.member_id)
        return cgh.ConsumerGroupHeartbeatResponse(
            member_id=request.member_id, member_epoch=request.member_epoch
        )

    @staticmethod
    def _static_member(group: ConsumerGroup, instance_id: str, member_id: str) -> ConsumerMember:
        member = group.static_member(instance_id)
        if member is None:
            raise UnknownMemberIdError(f"Instance id {instance_id} is unknown.")
        if member.member_id != member_id:
            raise FencedInstanceIdError(
                f"Static member {member_id} with instance id {instance_id} was fenced by member "
                f"{member.member_id}."
            )
        return member

    def fence(self, group: ConsumerGroup, member_id: str) -> None:
        """Remove a member (it left, or timed out) and bump the group epoch."""
        if group.remove_member(member_id) is None:
            return
        member_left(group, self._cluster.topics())
        self._cancel_timers(group.group_id, member_id)

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        self._timers.cancel(("consumer-session", group_id, member_id))
        self._timers.cancel(("consumer-rebalance", group_id, member_id))

    # -- a heartbeat --------------------------------------------------------------------------

    def _member(
        self, group: ConsumerGroup, request: cgh.ConsumerGroupHeartbeatRequest, member_id: str
    ) -> ConsumerMember:
        joining = request.member_epoch == 0
        owned = _owned(request)
        if request.instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                if not joining:
                    raise UnknownMemberIdError(
                        f"Member {member_id} is not a member of group {group.group_id}."
                    )
                return ConsumerMember(member_id=member_id)
            _check_epoch(member, request.member_epoch, owned)
            return member
        existing = group.static_member(request.instance_id)
        if joining:
            if existing is None:
                return group.members.get(member_id) or ConsumerMember(member_id=member_id)
            if existing.member_epoch != STATIC_LEAVE_EPOCH:
                raise UnreleasedInstanceIdError(
                    f"Static member {member_id} with instance id {request.instance_id} cannot "
                    f"join the group because the instance id is owned by {existing.member_id} "
                    "member."
                )
            self._cancel_timers(group.group_id, existing.member_id)
            logger.info(
                "group %s: static member %s rejoins as %s",
                group.group_id,
                request.instance_id,
                member_id,
            )
            return group.replace_static_member(existing, member_id)
        member = self._static_member(group, request.instance_id, member_id)
        _check_epoch(member, request.member_epoch, owned)
        return member

    def _heartbeat(
        self, request: cgh.ConsumerGroupHeartbeatRequest, client: tuple[str, str]
    ) -> cgh.ConsumerGroupHeartbeatResponse:
        group = self._group_for(request.group_id, request.member_epoch == 0)
        member_id = request.member_id or str(uuid.uuid4())
        member = self._member(group, request, member_id)
        updated = replace(
            member,
            instance_id=request.instance_id or member.instance_id,
            rack_id=request.rack_id or member.rack_id,
            rebalance_timeout_ms=(
                request.rebalance_timeout_ms
                if request.rebalance_timeout_ms != -1
                else member.rebalance_timeout_ms
            ),
            server_assignor=request.server_assignor or member.server_assignor,
            subscribed_topic_names=(
                frozenset(request.subscribed_topic_names)
                if request.subscribed_topic_names is not None
                else member.subscribed_topic_names
            ),
            subscribed_topic_regex=(
                request.subscribed_topic_regex
                if request.subscribed_topic_regex is not None
                else member.subscribed_topic_regex
            ),
            client_id=client[0],
            client_host=client[1],
        )
        changed = (
            updated.subscribed_topic_names != member.subscribed_topic_names
            or updated.subscribed_topic_regex != member.subscribed_topic_regex
        )
        group.put_member(updated)
        refresh_epoch(group, self._cluster.topics(), subscription_changed=changed)
        reconciled = reconcile(
            updated,
            group.assignment_epoch,
            group.target.get(member_id, frozenset()),
            group.owner_of,
            _owned(request),
        )
        if reconciled != updated:
            group.put_member(reconciled)
            self._schedule_rebalance_timeout(group, reconciled)
        self._timers.schedule(
            ("consumer-session", group.group_id, member_id),
            self._settings.consumer_group_session_timeout_ms,
            lambda: self._session_expired(group, member_id),
        )
        full = request.member_epoch == 0 or (
            request.rebalance_timeout_ms != -1
            and (
                request.subscribed_topic_names is not None
                or request.subscribed_topic_regex is not None
            )
            and request.topic_partitions is not None
        )
        return cgh.ConsumerGroupHeartbeatResponse(
            member_id=member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self._settings.consumer_group_heartbeat_interval_ms,
            assignment=(
                _assignment(reconciled.assigned)
                if full or reconciled.assigned != member.assigned
                else None
            ),
        )

    def _schedule_rebalance_timeout(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        key = ("consumer-rebalance", group.group_id, member.member_id)
        if member.state is not MemberState.UNREVOKED_PARTITIONS:
            self._timers.cancel(key)
            return
        epoch = member.member_epoch

        def revocation_overdue() -> None:
            current = group.members.get(member.member_id)
            if not group.dead and current is not None and current.member_epoch == epoch:
                logger.info(
                    "group %s: member %s did not revoke within %d ms",
                    group.group_id,
                    member.member_id,
                    member.rebalance_timeout_ms,
                )
                self.fence(group, member.member_id)

        self._timers.schedule(key, member.rebalance_timeout_ms, revocation_overdue)

    def _session_expired(self, group: ConsumerGroup, member_id: str) -> None:
        if not group.dead and member_id in group.members:
            logger.info("group %s: member %s's session expired", group.group_id, member_id)
            self.fence(group, member_id)


def _check_epoch(member: ConsumerMember, received: int, owned: Partitions | None) -> None:
    """FENCED_MEMBER_EPOCH unless ``received`` is the member's epoch, 0 (a rejoin after being
    fenced, KAFKA-19233), or its previous epoch with owned partitions within its assignment
    (the answer that moved it on was lost)."""
    if received in (0, member.member_epoch):
        return
    if (
        received < member.member_epoch
        and received == member.previous_member_epoch
        and owned is not None
        and owned <= member.assigned
    ):
        return
    relation = "greater" if received > member.member_epoch else "smaller"
    known = member.member_epoch
    raise FencedMemberEpochError(
        f"The consumer group member has a {relation} member epoch ({received}) than the one "
        f"known by the group coordinator ({known}). The member must abandon all its "
        "partitions and rejoin."
    )
