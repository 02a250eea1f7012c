"""Group membership with the classic protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup.

One background task per consumer runs the membership: it joins (the leader runs the
assignor and hands out the assignments in its SyncGroup), then heartbeats every
``heartbeat_interval_ms`` while the application does whatever it does, and joins again when
the coordinator says the group is rebalancing. Its states and their moves are
:data:`~.member_state.CLASSIC_MOVES`: UNJOINED -> JOINING -> SYNCING -> RECONCILING ->
STABLE, and back to JOINING for each rebalance. Rules it keeps (and the one every part of
the group keeps: rebalances act in the poll, :mod:`kafkawire.consumer.group`):

- Eager assignors (range, roundrobin, sticky): in the poll the member commits (with
  auto-commit), tells the listener it revokes everything and gives everything up; then it
  joins. Cooperative (every configured assignor is cooperative-sticky, KIP-429): it keeps
  consuming what it owns while the group rebalances, gives up only what the new assignment
  takes away (committing it first), and then joins once more so those partitions reach their
  new owner. The member heartbeats while it waits for the poll.
- Revoking (either way) first stops the partitions' records reaching the application, then
  commits, so the next owner reads on from the last record handed out.
- A rebalance the coordinator announces while the member syncs or reconciles, or a change of
  subscription meanwhile, is joined once the assignment in hand is applied (as Java's
  ``rejoinNeeded``).
- Thrown out of the group (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID): its partitions are *lost*
  (the listener hears so in the next poll; nothing is committed for them; a commit before
  then fails) and it joins afresh.
- Fenced (FENCED_INSTANCE_ID: another consumer joined with this one's ``group_instance_id``):
  its partitions are lost too, but it does not join again (that would fence the other one in
  turn): :class:`~kafkawire.errors.FencedInstanceIdError` is fatal, and every later poll
  raises it, as Kafka's Java client raises ``FencedInstanceIdException``.
- A lost connection to the coordinator (or NOT_COORDINATOR) in the middle of JoinGroup,
  SyncGroup or a heartbeat: the cluster layer looks the coordinator up again and sends the
  request once more, with the member id the member has (a JoinGroup whose answer was lost may
  leave the broker with a member that only its session timeout removes). A join that fails
  is tried again after a backoff (a retriable error quietly; another reaches the application
  first); a connection the coordinator closes in answer to each JoinGroup says which version
  it may not serve (librdkafka's mock cluster lists v6 and closes on it).
- ``max_poll_interval_ms``: if the application does not poll for that long, the member
  leaves the group so that its partitions move on; its next poll hears they were lost and
  joins again.
- Static members (``group_instance_id``) do not send LeaveGroup on close: a restart within
  the session timeout gets the same partitions back without a rebalance.
- The eager ``sticky`` assignor learns what each member had from the subscription's user data
  (members own nothing when they join, having given everything up): this member sends its
  last assignment and generation there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from kafkawire.cluster import RequestRefusedError, TopicPartition
from kafkawire.consumer._waiting import wait_event
from kafkawire.consumer.commits import Generation
from kafkawire.consumer.member_data import (
    STICKY,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from kafkawire.consumer.tasks import is_transient
from kafkawire.errors import (
    FencedInstanceIdError,
    IllegalGenerationError,
    KafkawireError,
    MemberIdRequiredError,
    RebalanceInProgressError,
    UnknownMemberIdError,
    error_for_code,
    raise_for_code,
)
from kafkawire.messages.heartbeat import v4 as heartbeat
from kafkawire.messages.join_group import v9 as join_group
from kafkawire.messages.leave_group import v5 as leave_group
from kafkawire.messages.sync_group import v5 as sync_group

from .assignors import COOPERATIVE, assign
from .member_state import CLASSIC_MOVES, MemberState
from .membership import GroupContext, GroupMembership, PollTimeout

__all__ = ["ClassicMember"]

_log = logging.getLogger(__name__)

_JOIN_GROUP = join_group.JoinGroupRequest.__api_key__
_S = MemberState
_THROWN_OUT = (IllegalGenerationError, UnknownMemberIdError)


class ClassicMember(GroupMembership):
    """The membership of one consumer in its group (classic protocol)."""

    MOVES = CLASSIC_MOVES
    PROTOCOL = "classic"
    API = (_JOIN_GROUP, "JoinGroup")

    def __init__(self, context: GroupContext) -> None:
        super().__init__(context)
        settings = context.settings
        self.cooperative = set(settings.partition_assignment_strategy) <= COOPERATIVE
        self.leader = False  # whether this member assigned the partitions at the last join
        self._previous: set[TopicPartition] | None = None  # the last assignment, for sticky
        # A rebalance to join once the join or the assignment in hand is done (Java's
        # ``rejoinNeeded``): announced, asked (subscription), or partitions to hand over.
        self._rejoin_needed = False

    def request_rejoin(self) -> None:
        if self.state is _S.STABLE:
            self._move(_S.JOINING)
        elif self.state.active:
            self._rejoin_needed = True
        self._wake.set()

    # --- the loop ----------------------------------------------------------------------------

    async def _turn(self) -> bool:
        """Join if the member is to, else heartbeat after an interval; act on what the
        coordinator says. ``False`` once the membership has ended for good."""
        if self.state in (_S.SYNCING, _S.RECONCILING):  # cut short: join again
            self._move(_S.JOINING)
        try:
            if self.state in (_S.UNJOINED, _S.JOINING):
                await self._join()
            await self._heartbeat_once()
        except FencedInstanceIdError as exc:
            why = (
                ": another consumer joined with group_instance_id "
                f"{self._settings.group_instance_id!r}"
            )
            await self._fatal(exc, why)
            return False
        except _THROWN_OUT as exc:
            await self._thrown_out(exc)
        except PollTimeout:
            await self._leave_for_slowness()
        except RebalanceInProgressError:
            if self.state is _S.STABLE:
                self._move(_S.JOINING)
        except (KafkawireError, OSError) as exc:  # others: the task's owner reports them
            if not is_transient(exc):  # the application hears of it; the member tries again
                _log.warning("group %s: %s; trying again", self._group_id, exc)
                self._inbox.put(exc)
            await asyncio.sleep(self._settings.retry_backoff_ms / 1000)
        return True

    async def _heartbeat_once(self) -> None:
        """In the group: sleep a heartbeat interval (or until woken), then heartbeat and
        check the poll interval."""
        if self.state is not _S.STABLE:
            return
        self._wake.clear()
        if await wait_event(self._wake, self._settings.heartbeat_interval_ms / 1000):
            return
        self._check_poll_interval()
        await self._heartbeat()

    def _identity(self) -> dict[str, Any]:
        """The fields that say who is asking, as Heartbeat and SyncGroup name them."""
        g = self.generation
        return {
            "group_id": self._group_id,
            "generation_id": g.generation_id,
            "member_id": g.member_id,
            "group_instance_id": g.group_instance_id,
        }

    async def _heartbeat(self) -> None:
        request = heartbeat.HeartbeatRequest(**self._identity())
        response = await self._send_heartbeat(request)
        raise_for_code(response.error_code, f"heartbeat of group {self._group_id}")

    async def _beat(self) -> None:
        """A heartbeat while the member waits for a poll (a rebalance it hears of then is
        joined after the work)."""
        try:
            await self._heartbeat()
        except RebalanceInProgressError:
            self._rejoin_needed = True

    def _out_of_group(self, error: KafkawireError | None = None) -> None:
        # Thrown out by ILLEGAL_GENERATION, the member id stays the member's to join with.
        keep = isinstance(error, IllegalGenerationError)
        member_id = self.generation.member_id if keep else ""
        self.generation = Generation(-1, member_id, self._settings.group_instance_id)

    async def _lose_all(self) -> set[TopicPartition]:
        self._previous = None  # the sticky assignor hears of no previous assignment
        return await super()._lose_all()

    # --- joining -----------------------------------------------------------------------------

    async def _join(self) -> None:
        if self.state is _S.UNJOINED:
            self._move(_S.JOINING)
        if not self.cooperative and self._subscriptions.assigned():
            beat = self._beat if self.holds_generation else None
            await self._at_poll(self._give_up_all, beat=beat)
        owned = set(self._subscriptions.assigned())
        self._rejoin_needed = False  # a rebalance asked from here on is another join
        joined = await self._join_group(owned)
        self._move(_S.SYNCING)
        self.leader = joined.leader == joined.member_id
        assignments = await self._assign(joined) if self.leader else {}
        assigned = set(await self._sync(joined, assignments))
        self._move(_S.RECONCILING)
        round_ = self._round
        await self._at_poll(lambda: self._take(assigned, round_), beat=self._beat)
        self._move(_S.JOINING if self._rejoin_needed else _S.STABLE)

    async def _give_up_all(self) -> None:
        """Before an eager member joins: revoke everything (committing it, with
        auto-commit)."""
        await self._revoke(set(self._subscriptions.assigned()))

    async def _join_group(self, owned: set[TopicPartition]) -> Any:
        settings = self._settings
        topics, generation = self._subscriptions.topics, self.generation.generation_id
        metadata = {
            name: encode_subscription(
                topics, owned, generation, previous=self._previous if name == STICKY else None
            )
            for name in settings.partition_assignment_strategy
        }
        while True:
            request = join_group.JoinGroupRequest(
                group_id=self._group_id,
                session_timeout_ms=settings.session_timeout_ms,
                rebalance_timeout_ms=settings.max_poll_interval_ms,
                member_id=self.generation.member_id,
                group_instance_id=settings.group_instance_id,
                protocol_type="consumer",
                protocols=tuple(
                    join_group.JoinGroupRequestProtocol(name=name, metadata=data)
                    for name, data in metadata.items()
                ),
            )
            try:
                response = await self._cluster.send(request, negotiate=True)
            except RequestRefusedError as exc:
                raise await self._join_refused(exc) from exc
            error = error_for_code(response.error_code, f"JoinGroup of {self._group_id}")
            if isinstance(error, MemberIdRequiredError):  # KIP-394: join again with this id
                self.generation = Generation(-1, response.member_id, settings.group_instance_id)
                continue
            if isinstance(error, UnknownMemberIdError):
                self.generation = Generation(-1, "", settings.group_instance_id)
                continue
            if error is not None:
                raise error
            self.generation = Generation(
                response.generation_id, response.member_id, settings.group_instance_id
            )
            _log.info(
                "group %s: joined generation %d as %s (%s)",
                self._group_id,
                response.generation_id,
                response.member_id,
                "leader" if response.leader == response.member_id else "follower",
            )
            return response

    async def _join_refused(self, error: RequestRefusedError) -> RequestRefusedError:
        """The coordinator closed the connection in answer to every JoinGroup: name the
        version sent (a broker may list one it does not serve) and the other protocol."""
        try:
            node, version = await self._coordinator_version()
        except (KafkawireError, OSError):
            return error  # the coordinator cannot be asked now: the error as it came
        return RequestRefusedError(
            f"group {self._group_id}: the coordinator (broker {node}) closed the connection "
            f"right after each JoinGroup v{version}: this broker may not serve JoinGroup "
            f"v{version} though it lists it (librdkafka's mock cluster lists v0-6 and closes "
            "on v6); with such a broker use group_protocol='consumer' ({error})"
        )

    async def _assign(self, joined: Any) -> dict[str, list[TopicPartition]]:
        """The leader's part: run the group's assignor over every member's subscription."""
        name = joined.protocol_name
        members = {m.member_id: decode_subscription(m.metadata, name) for m in joined.members}
        topics = sorted({t for m in members.values() for t in m.topics})
        metadata = await self._cluster.metadata(topics)
        counts = {t: len(metadata.topics[t].partitions) for t in topics if t in metadata.topics}
        return assign(name, members, counts)

    async def _sync(
        self, joined: Any, assignments: dict[str, list[TopicPartition]]
    ) -> list[TopicPartition]:
        request = sync_group.SyncGroupRequest(
            **self._identity(),
            protocol_type="consumer",
            protocol_name=joined.protocol_name,
            assignments=tuple(
                sync_group.SyncGroupRequestAssignment(
                    member_id=member, assignment=encode_assignment(tps)
                )
                for member, tps in assignments.items()
            ),
        )
        response = await self._cluster.send(request, negotiate=True)
        raise_for_code(response.error_code, f"SyncGroup of {self._group_id}")
        return decode_assignment(response.assignment)

    async def _take(self, assigned: set[TopicPartition], round_: int) -> None:
        """Apply a new assignment (in the poll); a cooperative member that gives partitions
        up joins once more, so that they reach their new owner."""
        revoked = await self._apply_assignment(assigned, round_)
        if revoked is None:
            return
        self._previous = assigned
        if revoked:  # cooperative only: eager members own nothing by now
            self._rejoin_needed = True

    async def _send_leave(self, member: Generation, reason: str) -> None:
        g = member
        if not g.member_id or g.group_instance_id is not None:
            return  # static members keep their place through a restart
        request = leave_group.LeaveGroupRequest(
            group_id=self._group_id,
            members=(leave_group.MemberIdentity(member_id=g.member_id, reason=reason),),
        )
        with contextlib.suppress(KafkawireError):
            await self._cluster.send(request, negotiate=True)
