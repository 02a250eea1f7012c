"""ShareGroupHeartbeat (v0-1, KIP-932), as Kafka's coordinator answers it
(``GroupMetadataManager.shareGroupHeartbeat``).

One heartbeat, in order:

1. Validate (INVALID_REQUEST): a group id; no empty rack id; from v1 a member id always (the
   client makes it; at v0 the coordinator makes one for a member joining without); at epoch 0
   subscribed topic names; no epoch below -1.
2. Epoch -1 leaves: the member goes and the group epoch moves on (GROUP_ID_NOT_FOUND,
   UNKNOWN_MEMBER_ID when there is no such group or member). Leaving releases no records:
   a member does that with its final ShareFetch or ShareAcknowledge (epoch -1) to each
   leader, or its records' locks expire.
3. The group: epoch 0 creates it (GROUP_ID_NOT_FOUND for an id another kind of group holds);
   otherwise it must exist. The member: epoch 0 joins (or rejoins under its id;
   GROUP_MAX_SIZE_REACHED when group.share.max.size members are in); otherwise
   UNKNOWN_MEMBER_ID for a member not in the group, FENCED_MEMBER_EPOCH for any epoch but its
   own (a share member has no partitions to give back, so no older epoch is tolerated).
4. A changed subscription, or subscribed topics that appeared, grew or went, move the group
   epoch on; a group epoch ahead of the assignment's recomputes it (:mod:`._share_assignor`).
5. The member takes its target assignment at the assignment epoch; its session restarts
   (group.share.session.timeout.ms: expiry removes it as a leave does).
6. The answer: its id and epoch, the heartbeat interval, and its assignment when it joined or
   the assignment changed.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace

from kafkawire.errors import (
    BrokerError,
    FencedMemberEpochError,
    GroupMaxSizeReachedError,
    InvalidRequestError,
)
from kafkawire.messages.share_group_heartbeat import v1 as sgh

from ._consumer_member import Partitions
from ._modern import Heartbeats, by_topic, member_left, refresh_epoch
from ._share_group import ShareGroup, ShareMember

__all__ = ["ShareHeartbeats"]

logger = logging.getLogger(__name__)

LEAVE_EPOCH = -1
_CLIENT_MEMBER_ID_VERSION = 1


def _assignment(partitions: Partitions) -> sgh.Assignment:
    return sgh.Assignment(
        topic_partitions=tuple(
            sgh.TopicPartitions(topic_id=t, partitions=tuple(ps))
            for t, ps in by_topic(partitions).items()
        )
    )


class ShareHeartbeats(Heartbeats[ShareGroup]):
    """ShareGroupHeartbeat for the share groups of one coordinator."""

    def heartbeat(
        self, request: sgh.ShareGroupHeartbeatRequest, version: int, client: tuple[str, str]
    ) -> sgh.ShareGroupHeartbeatResponse:
        """The answer to ``request`` (normalized to v1)."""
        try:
            _validate(request, version)
            if request.member_epoch == LEAVE_EPOCH:
                return self._leave(request)
            return self._heartbeat(request, client)
        except BrokerError as error:
            return sgh.ShareGroupHeartbeatResponse(
                error_code=error.code, error_message=error.message
            )

    def _leave(self, request: sgh.ShareGroupHeartbeatRequest) -> sgh.ShareGroupHeartbeatResponse:
        group = self._group_for(request.group_id, False)
        group.member(request.member_id)
        logger.info("share group %s: member %s left", group.group_id, request.member_id)
        self.fence(group, request.member_id)
        return sgh.ShareGroupHeartbeatResponse(
            member_id=request.member_id, member_epoch=LEAVE_EPOCH
        )

    def fence(self, group: ShareGroup, member_id: str) -> None:
        """Remove a member (it left, or its session expired) and move the group epoch on."""
        if group.remove_member(member_id) is None:
            return
        member_left(group, self._cluster.topics())
        self._timers.cancel(("share-session", group.group_id, member_id))

    def _heartbeat(
        self, request: sgh.ShareGroupHeartbeatRequest, client: tuple[str, str]
    ) -> sgh.ShareGroupHeartbeatResponse:
        joining = request.member_epoch == 0
        group = self._group_for(request.group_id, joining)
        member_id = request.member_id or str(uuid.uuid4())
        member = group.members.get(member_id)
        if member is None:
            if not joining:
                group.member(member_id)  # UNKNOWN_MEMBER_ID
            if len(group.members) >= self._settings.share_group_max_size:
                raise GroupMaxSizeReachedError(
                    f"The share group has reached its maximum capacity of "
                    f"{self._settings.share_group_max_size} members."
                )
            member = ShareMember(member_id=member_id)
        elif not joining and request.member_epoch != member.member_epoch:
            relation = "larger" if request.member_epoch > member.member_epoch else "smaller"
            raise FencedMemberEpochError(
                f"The share group member has a {relation} member epoch "
                f"({request.member_epoch}) than the one known by the group coordinator "
                f"({member.member_epoch}). The member must abandon all its partitions and rejoin."
            )
        subscribed = (
            frozenset(request.subscribed_topic_names)
            if request.subscribed_topic_names is not None
            else member.subscribed_topic_names
        )
        updated = replace(
            member,
            rack_id=request.rack_id or member.rack_id,
            client_id=client[0],
            client_host=client[1],
            subscribed_topic_names=subscribed,
        )
        group.members[member_id] = updated
        refresh_epoch(
            group,
            self._cluster.topics(),
            subscription_changed=subscribed != member.subscribed_topic_names,
        )
        reconciled = replace(
            updated,
            member_epoch=group.assignment_epoch,
            assigned=group.target.get(member_id, frozenset()),
        )
        group.members[member_id] = reconciled
        self._timers.schedule(
            ("share-session", group.group_id, member_id),
            self._settings.share_group_session_timeout_ms,
            lambda: self._session_expired(group, member_id),
        )
        changed = joining or reconciled.assigned != member.assigned
        return sgh.ShareGroupHeartbeatResponse(
            member_id=member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self._settings.share_group_heartbeat_interval_ms,
            assignment=_assignment(reconciled.assigned) if changed else None,
        )

    def _session_expired(self, group: ShareGroup, member_id: str) -> None:
        if not group.dead and member_id in group.members:
            logger.info("share group %s: member %s's session expired", group.group_id, member_id)
            self.fence(group, member_id)


def _validate(request: sgh.ShareGroupHeartbeatRequest, version: int) -> None:
    if not request.group_id.strip():
        raise InvalidRequestError("GroupId can't be empty.")
    if request.rack_id is not None and not request.rack_id.strip():
        raise InvalidRequestError("RackId can't be empty.")
    epoch = request.member_epoch
    if (version >= _CLIENT_MEMBER_ID_VERSION or epoch != 0) and not request.member_id.strip():
        raise InvalidRequestError("MemberId can't be empty.")
    if epoch == 0 and not request.subscribed_topic_names:
        raise InvalidRequestError("SubscribedTopicNames must be set in first request.")
    if epoch < LEAVE_EPOCH:
        raise InvalidRequestError("MemberEpoch is invalid.")
