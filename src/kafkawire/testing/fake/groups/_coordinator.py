"""The group coordinator of the fake cluster: one handler per group API, at any version.

The cluster core routes every request whose API key is in :attr:`GroupCoordinator.API_KEYS`
to :meth:`GroupCoordinator.handle`, with the id of the node that received it. The coordinator
answers NOT_COORDINATOR for a group another node coordinates (per group in batched requests),
reads the request at the newest version of its shape, runs Kafka's rules, and answers at the
request's version. JoinGroup and SyncGroup may be held (until the rebalance completes, until
the leader's assignment arrives); every other API answers at once.

Transactional offsets reach it through :meth:`GroupCoordinator.commit_offsets` when their
transaction commits; :meth:`GroupCoordinator.validate_txn_offset_commit` gives the core the
group's answer to a TxnOffsetCommit before that.

Time is the cluster's clock (``ClusterView.now``): :attr:`GroupCoordinator.timers` wake with
the event loop, or, on a :class:`~kafkawire.testing.fake.clock.ManualClock` the cluster
attaches them to, fire when the test advances it (:mod:`kafkawire.testing.fake.clock`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, cast

from kafkawire.errors import (
    BrokerError,
    CoordinatorNotAvailableError,
    InvalidGroupIdError,
    InvalidSessionTimeoutError,
    NotCoordinatorError,
    UnknownMemberIdError,
)
from kafkawire.messages.alter_share_group_offsets import v0 as alter_share_offsets
from kafkawire.messages.consumer_group_describe import v1 as cgd
from kafkawire.messages.consumer_group_heartbeat import v1 as cgh
from kafkawire.messages.delete_groups import v2 as delete
from kafkawire.messages.delete_share_group_offsets import v0 as delete_share_offsets
from kafkawire.messages.describe_groups import v6 as describe
from kafkawire.messages.describe_share_group_offsets import v1 as share_offsets
from kafkawire.messages.heartbeat import v4 as heartbeat
from kafkawire.messages.join_group import v9 as join_group
from kafkawire.messages.leave_group import v5 as leave_group
from kafkawire.messages.list_groups import v5 as listing
from kafkawire.messages.share_group_describe import v1 as sgd
from kafkawire.messages.share_group_heartbeat import v1 as sgh
from kafkawire.messages.sync_group import v5 as sync_group
from kafkawire.protocol.versions import convert
from kafkawire.testing.fake.clock import Timers
from kafkawire.testing.fake.config import FakeConfig
from kafkawire.testing.fake.view import ClusterView, ShareStateView

from ._admin import GroupAdmin
from ._classic_group import ClassicGroup
from ._classic_join import ClassicJoin
from ._classic_members import ClassicMembers, LeavingMember
from ._classic_rebalance import ClassicRebalance
from ._consumer_heartbeat import ConsumerHeartbeats
from ._groups import Groups
from ._offsets import OffsetRequests, OffsetStore
from ._responses import at_version, error_response, leave_request_members
from ._share_admin import ShareAdmin
from ._share_heartbeat import ShareHeartbeats

__all__ = ["GroupCoordinator"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Call:
    """Who a request came from and which node received it."""

    node_id: int
    client: tuple[str, str]  # (client id, client host)
    coordinator_for: Callable[[str], int]

    def coordinates(self, group_id: str) -> bool:
        return self.coordinator_for(group_id) == self.node_id


_Handler = Callable[[Any, int, _Call], Awaitable[Any]]


class GroupCoordinator:
    """The group coordinator of a fake cluster (every node's; see the module docstring)."""

    API_KEYS: ClassVar[frozenset[int]] = frozenset(
        {8, 9, 11, 12, 13, 14, 15, 16, 42, 47, 68, 69, 76, 77, 90, 91, 92}
    )
    # The versions served, per API key: every version kafkawire's messages know.
    VERSIONS: ClassVar[Mapping[int, range]] = {
        8: range(11), 9: range(11), 11: range(10), 12: range(5), 13: range(6), 14: range(6),
        15: range(7), 16: range(6), 42: range(3), 47: range(1), 68: range(2), 69: range(2),
        76: range(2), 77: range(2), 90: range(2), 91: range(1), 92: range(1),
    }  # fmt: skip

    def __init__(self, cluster: ClusterView, config: FakeConfig, shares: ShareStateView) -> None:
        self._cluster = cluster
        self._settings = config
        self.timers = Timers(cluster.now)
        self._groups = Groups()
        self._store = OffsetStore()
        self._rebalance = ClassicRebalance(self.timers, config)
        self._join = ClassicJoin(self._rebalance)
        self._members = ClassicMembers(self._rebalance)
        self._heartbeats = ConsumerHeartbeats(
            cluster, config, self.timers, lambda g, create: self._groups.consumer(g, create=create)
        )
        self._share_heartbeats = ShareHeartbeats(
            cluster, config, self.timers, lambda g, create: self._groups.share(g, create=create)
        )
        self._offsets = OffsetRequests(cluster, self._groups, self._rebalance, self._store)
        self._admin = GroupAdmin(self._groups, self._store, shares, cluster.topics)
        self._share_admin = ShareAdmin(self._groups, shares, cluster.topics)
        self._closed = False
        self._handlers: dict[int, _Handler] = {
            8: self._offset_commit,
            9: self._offset_fetch,
            11: self._join_group,
            12: self._heartbeat,
            13: self._leave_group,
            14: self._sync_group,
            15: self._describe_groups,
            16: self._list_groups,
            42: self._delete_groups,
            47: self._offset_delete,
            68: self._consumer_group_heartbeat,
            69: self._consumer_group_describe,
            76: self._share_group_heartbeat,
            77: self._share_group_describe,
            90: self._describe_share_group_offsets,
            91: self._alter_share_group_offsets,
            92: self._delete_share_group_offsets,
        }

    # -- the seam -----------------------------------------------------------------------------

    async def handle(
        self, request: Any, node_id: int, *, client_id: str = "", client_host: str = ""
    ) -> Any:
        """The answer to ``request`` (any group API, any version) received by ``node_id``.

        ``client_id`` and ``client_host`` (the request header's client id, the peer's
        address) name the member in generated member ids and in DescribeGroups.
        """
        key: int = request.__api_key__
        handler = self._handlers.get(key)
        if handler is None:
            raise ValueError(f"GroupCoordinator.handle: API key {key} is not a group API")
        if self._closed:
            return error_response(request, CoordinatorNotAvailableError.code)
        self.timers.fire_due()
        call = _Call(node_id, (client_id, client_host), self._cluster.coordinator_for)
        return await handler(request, request.__version__, call)

    def commit_offsets(
        self, group_id: str, offsets: Mapping[tuple[str, int], tuple[int, int, str | None]]
    ) -> None:
        """Store the offsets of a committed transaction: (topic, partition) -> (offset,
        leader epoch, metadata)."""
        self._offsets.commit_transactional(group_id, offsets)

    def validate_txn_offset_commit(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> int:
        """The error code for a TxnOffsetCommit's group fields (0: accepted), as Kafka
        checks them (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID)."""
        return self._offsets.validate_transactional(
            group_id, member_id, group_instance_id, generation_id
        )

    def close(self) -> None:
        """Cancel every timer and answer every held request NOT_COORDINATOR (as a broker that
        loses the coordinator does); later requests are COORDINATOR_NOT_AVAILABLE."""
        if self._closed:
            return
        self._closed = True
        self.timers.close()
        classic = [g for g in self._groups if isinstance(g, ClassicGroup)]
        self._rebalance.close(classic, NotCoordinatorError.code)

    # -- routing ------------------------------------------------------------------------------

    @staticmethod
    def _refuse(request: Any, call: _Call) -> Any | None:
        """The NOT_COORDINATOR answer if another node coordinates the request's group."""
        if call.coordinates(request.group_id):
            return None
        return error_response(request, NotCoordinatorError.code)

    def _check_group(self, request: Any, call: _Call) -> Any | None:
        """The answer to a request for one group that names none (INVALID_GROUP_ID) or one
        another node coordinates (NOT_COORDINATOR); None if it may go on."""
        if not request.group_id:
            return error_response(request, InvalidGroupIdError.code)
        return self._refuse(request, call)

    # -- classic groups -----------------------------------------------------------------------

    async def _join_group(self, request: Any, version: int, call: _Call) -> Any:
        joining = cast(join_group.JoinGroupRequest, convert(request, 9))
        if version == 0:  # v0 has no rebalance timeout: the session timeout stands for it
            joining = replace(joining, rebalance_timeout_ms=joining.session_timeout_ms)
        low = self._settings.group_min_session_timeout_ms
        high = self._settings.group_max_session_timeout_ms
        if joining.group_id and not low <= joining.session_timeout_ms <= high:
            return error_response(request, InvalidSessionTimeoutError.code)
        refused = self._check_group(request, call)
        if refused is not None:
            return refused
        try:
            group = self._groups.classic_to_join(joining.group_id, create=not joining.member_id)
        except BrokerError as error:
            return error_response(request, error.code)
        if group is None:
            return error_response(request, UnknownMemberIdError.code)
        waiter = self._join.join(group, joining, version, call.client)
        self.timers.fire_due()  # a zero initial rebalance delay is due now
        return at_version(await asyncio.shield(waiter), version)

    async def _sync_group(self, request: Any, version: int, call: _Call) -> Any:
        refused = self._check_group(request, call)
        if refused is not None:
            return refused
        syncing = cast(sync_group.SyncGroupRequest, convert(request, 5))
        waiter = self._members.sync(self._groups.classic(syncing.group_id), syncing, version)
        return at_version(await asyncio.shield(waiter), version)

    async def _heartbeat(self, request: Any, version: int, call: _Call) -> Any:
        refused = self._check_group(request, call)
        if refused is not None:
            return refused
        beat = cast(heartbeat.HeartbeatRequest, convert(request, 4))
        code = self._members.heartbeat(
            self._groups.classic(beat.group_id),
            beat.member_id,
            beat.group_instance_id,
            beat.generation_id,
        )
        return at_version(heartbeat.HeartbeatResponse(error_code=code), version)

    async def _leave_group(self, request: Any, version: int, call: _Call) -> Any:
        refused = self._check_group(request, call)
        if refused is not None:
            return refused
        leaving = [LeavingMember(m, i) for m, i in leave_request_members(request)]
        answer: leave_group.LeaveGroupResponse = self._members.leave(
            self._groups.classic(request.group_id), leaving
        )
        return at_version(answer, version)

    # -- KIP-848 groups -----------------------------------------------------------------------

    async def _consumer_group_heartbeat(self, request: Any, version: int, call: _Call) -> Any:
        # An empty group id is the heartbeat's INVALID_REQUEST, not routed anywhere.
        if request.group_id and (refused := self._refuse(request, call)):
            return refused
        beat = cast(cgh.ConsumerGroupHeartbeatRequest, convert(request, 1))
        return at_version(self._heartbeats.heartbeat(beat, version, call.client), version)

    async def _consumer_group_describe(self, request: Any, version: int, call: _Call) -> Any:
        asked = cast(cgd.ConsumerGroupDescribeRequest, convert(request, 1))
        answer = self._admin.consumer_group_describe(
            asked.group_ids, asked.include_authorized_operations, call.coordinates
        )
        return at_version(answer, version)

    # -- share groups -------------------------------------------------------------------------

    async def _share_group_heartbeat(self, request: Any, version: int, call: _Call) -> Any:
        # An empty group id is the heartbeat's INVALID_REQUEST, not routed anywhere.
        if request.group_id and (refused := self._refuse(request, call)):
            return refused
        beat = cast(sgh.ShareGroupHeartbeatRequest, convert(request, 1))
        return at_version(self._share_heartbeats.heartbeat(beat, version, call.client), version)

    async def _share_group_describe(self, request: Any, version: int, call: _Call) -> Any:
        asked = cast(sgd.ShareGroupDescribeRequest, convert(request, 1))
        answer = self._share_admin.describe(
            asked.group_ids, asked.include_authorized_operations, call.coordinates
        )
        return at_version(answer, version)

    async def _describe_share_group_offsets(self, request: Any, version: int, call: _Call) -> Any:
        asked = cast(share_offsets.DescribeShareGroupOffsetsRequest, convert(request, 1))
        return at_version(self._share_admin.describe_offsets(asked, call.coordinates), version)

    async def _alter_share_group_offsets(self, request: Any, version: int, call: _Call) -> Any:
        asked = cast(alter_share_offsets.AlterShareGroupOffsetsRequest, convert(request, 0))
        return at_version(self._share_admin.alter_offsets(asked, call.coordinates), version)

    async def _delete_share_group_offsets(self, request: Any, version: int, call: _Call) -> Any:
        asked = cast(delete_share_offsets.DeleteShareGroupOffsetsRequest, convert(request, 0))
        return at_version(self._share_admin.delete_offsets(asked, call.coordinates), version)

    # -- offsets ------------------------------------------------------------------------------

    async def _offset_commit(self, request: Any, version: int, call: _Call) -> Any:
        # An empty group id is a group like any other here (Kafka keeps that for old clients).
        refused = self._refuse(request, call)
        return refused if refused is not None else self._offsets.commit(request)

    async def _offset_fetch(self, request: Any, version: int, call: _Call) -> Any:
        return self._offsets.fetch(request, call.coordinates)

    async def _offset_delete(self, request: Any, version: int, call: _Call) -> Any:
        refused = self._check_group(request, call)
        return refused if refused is not None else self._offsets.delete(request)

    # -- administration -----------------------------------------------------------------------

    async def _describe_groups(self, request: Any, version: int, call: _Call) -> Any:
        asked = cast(describe.DescribeGroupsRequest, convert(request, 6))
        answer = self._admin.describe_groups(
            asked.groups, asked.include_authorized_operations, version, call.coordinates
        )
        return at_version(answer, version)

    async def _list_groups(self, request: Any, version: int, call: _Call) -> Any:
        asked = cast(listing.ListGroupsRequest, convert(request, 5))
        answer = self._admin.list_groups(asked.states_filter, asked.types_filter, call.coordinates)
        return at_version(answer, version)

    async def _delete_groups(self, request: Any, version: int, call: _Call) -> Any:
        asked = cast(delete.DeleteGroupsRequest, convert(request, 2))
        return at_version(self._admin.delete_groups(asked.groups_names, call.coordinates), version)
