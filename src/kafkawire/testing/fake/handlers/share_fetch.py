"""ShareFetch (v0-2, KIP-932): acknowledge, then acquire records for a share group's member.

In Kafka's order (``KafkaApis.handleShareFetchRequest``):

1. The group and member (:mod:`.share_common`); from v2 a request with ``is_renew_ack`` must
   ask for nothing (``max_bytes``, ``min_bytes``, ``max_records`` and ``max_wait_ms`` all 0),
   else INVALID_REQUEST.
2. The share session (:mod:`kafkawire.testing.fake.share.sessions`); its errors answer the
   whole request. Every partition the request names joins the session (from v1; at v0 those
   with a ``partition_max_bytes`` above 0), piggybacked acknowledgements or not.
3. The acknowledgements, partition by partition, in ``acknowledge_error_code``.
4. Epoch -1: the session closes and the member's records are released; nothing is fetched
   (the partitions it names only carry acknowledgements). A renewal (``is_renew_ack``)
   fetches nothing either (KIP-1222).
5. The fetch: the session's partitions (the request's at epoch 0), in an order rotated by the
   session epoch, share ``max_records`` (from v1; unlimited at v0) and ``max_bytes`` (split
   evenly); each acquires by :mod:`kafkawire.testing.fake.share.acquire` (``batch_size`` from
   v1, the acquire mode from v2). With fewer than ``min_bytes`` to acquire the answer waits up
   to ``max_wait_ms`` for records (new ones, released ones, expired locks), or until a
   partition's leadership moves.

The answer names every partition at epoch 0, later only those with news (sessions module),
always those acknowledged, and carries the group's lock duration
(``acquisition_lock_timeout_ms``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from kafkawire.testing.fake.build import build
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.share.acks import renew_allowed
from kafkawire.testing.fake.share.acquire import FetchLimits
from kafkawire.testing.fake.share.sessions import FINAL_EPOCH, INITIAL_EPOCH, ShareSession
from kafkawire.testing.fake.share.sessions import Partition as SessionPartition
from kafkawire.testing.fake.state import Partition

from .common import response_for
from .share_common import Answer, acknowledge_partition, locate, member_problem, partition_answers

__all__ = ["handle"]

_NO_LIMIT = 2**31 - 1
_RECORD_LIMIT_MODE = 1


async def handle(call: Call) -> Any:
    request = call.request
    shares = call.services.shares
    shares.timers.fire_due()
    problem = member_problem(request) or _renew_problem(request)
    if problem is not None:
        return _error(call, Error.INVALID_REQUEST, problem)
    key = (request.group_id, request.member_id)
    asked = _asked(request)
    acks = {
        (t.topic_id, p.partition_index): p.acknowledgement_batches
        for t in request.topics
        for p in t.partitions
        if p.acknowledgement_batches
    }
    session = _session(call, key, asked, acks)
    if isinstance(session, Error):
        return _error(call, session, f"{session.name} for share session of member {key[1]}")
    answers: dict[SessionPartition, Answer] = {}
    renew = renew_allowed(request)
    for where, batches in acks.items():
        failure = acknowledge_partition(call, key, where, batches, renew=renew)
        answers[where] = Answer(acknowledge=failure)
    epoch = request.share_session_epoch
    if epoch == FINAL_EPOCH:
        shares.sessions[call.node_id].close(key)
        shares.release_session(call.node_id, session)
    elif not renew:
        full = epoch == INITIAL_EPOCH
        fetched = await _fetch(call, key, asked if full else list(session.partitions), epoch)
        for where, answer in fetched.items():
            if full or session.named(
                where, has_records=bool(answer.records), error=bool(answer.error)
            ):
                answers[where] = _merged(answer, answers.get(where))
    topics, endpoints = partition_answers(response_for(call), call, answers)
    return build(
        response_for(call),
        acquisition_lock_timeout_ms=shares.lock_duration_ms(request.group_id),
        responses=topics,
        node_endpoints=endpoints,
    )


def _renew_problem(request: Any) -> str | None:
    if not renew_allowed(request):
        return None
    asked = (request.max_bytes, request.min_bytes, request.max_records, request.max_wait_ms)
    if any(asked):
        return (
            "a renewal (is_renew_ack) must set max_bytes, min_bytes, max_records, max_wait_ms to 0"
        )
    return None


def _error(call: Call, error: Error, message: str) -> Any:
    return build(
        response_for(call),
        error_code=error,
        error_message=message,
        acquisition_lock_timeout_ms=call.services.shares.lock_duration_ms(
            call.request.group_id or ""
        ),
    )


def _asked(request: Any) -> list[SessionPartition]:
    """The partitions the request asks to fetch (at v0 those with bytes to fetch)."""
    return [
        (t.topic_id, p.partition_index)
        for t in request.topics
        for p in t.partitions
        if getattr(p, "partition_max_bytes", 1) > 0
    ]


def _session(
    call: Call, key: tuple[str, str], asked: list[SessionPartition], acks: dict[Any, Any]
) -> ShareSession | Error:
    """The request's share session, opened, moved on or about to close (sessions module)."""
    request = call.request
    cache = call.services.shares.sessions[call.node_id]
    epoch = request.share_session_epoch
    if epoch == INITIAL_EPOCH:
        if acks:
            return Error.INVALID_REQUEST
        return cache.open(key, asked, call.connection_id)
    session = cache.current(key, epoch)
    if isinstance(session, Error) or epoch == FINAL_EPOCH:
        return session
    session.add(asked)
    for topic in request.forgotten_topics_data:
        for index in topic.partitions:
            session.partitions.pop((topic.topic_id, index), None)
    cache.advance(session)
    return session


def _merged(fetched: Answer, acked: Answer | None) -> Answer:
    if acked is not None:
        fetched.acknowledge = acked.acknowledge
    return fetched


async def _fetch(
    call: Call, key: tuple[str, str], wanted: list[SessionPartition], epoch: int
) -> dict[SessionPartition, Answer]:
    """Each partition's answer: an error, or what was acquired (waiting as the module says)."""
    if wanted:
        turn = max(epoch, 0) % len(wanted)
        wanted = wanted[turn:] + wanted[:turn]  # Kafka's PartitionRotateStrategy.ROUND_ROBIN
    answers = {where: Answer() for where in wanted}
    led = _led_here(call, answers)
    if not led:
        return answers
    request = call.request
    group_id, member_id = key
    shares = call.services.shares
    limits = _limits(call, len(led))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + request.max_wait_ms / 1000
    while True:
        pending = sum(shares.acquirable(group_id, w[0], p, limits) for w, p in led)
        left = deadline - loop.time()
        if pending >= request.min_bytes or left <= 0:
            break
        await call.state.changes.wait(left)
        still = _led_here(call, answers)
        if len(still) < len(led):  # a leadership moved: answered at once, as Kafka's
            led = still  # delayed share fetch completes with the partition's error
            break
    budget = limits.max_records
    for where, partition in led:
        acquired = shares.acquire(
            group_id,
            member_id,
            where[0],
            partition,
            dataclasses.replace(limits, max_records=budget),
        )
        budget -= acquired.count
        answers[where].records = acquired.records
        answers[where].acquired = tuple(
            (r.first, r.last, r.delivery_count) for r in acquired.ranges
        )
    return answers


def _led_here(
    call: Call, answers: dict[SessionPartition, Answer]
) -> list[tuple[SessionPartition, Partition]]:
    """The partitions this broker leads now, in order; the others' answers get their error."""
    led = []
    for where, answer in answers.items():
        answer.partition, answer.error = locate(call.state, call.node_id, *where)
        if answer.error is Error.NONE and answer.partition is not None:
            led.append((where, answer.partition))
    return led


def _limits(call: Call, partitions: int) -> FetchLimits:
    request = call.request
    return FetchLimits(
        max_records=getattr(request, "max_records", _NO_LIMIT),
        max_bytes=max(request.max_bytes // partitions, 1),
        batch_size=getattr(request, "batch_size", 0),
        record_limit=getattr(request, "share_acquire_mode", 0) == _RECORD_LIMIT_MODE,
        max_in_flight=call.services.state.config.share_group_partition_max_record_locks,
    )
