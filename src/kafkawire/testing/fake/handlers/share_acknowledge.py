"""ShareAcknowledge (v0-2, KIP-932): a member's acknowledgements, without fetching.

In Kafka's order (``KafkaApis.handleShareAcknowledgeRequest``): the group and member
(:mod:`.share_common`); the share session (epoch 0 is INVALID_SHARE_SESSION_EPOCH: only a
ShareFetch opens one; else SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH), whose errors
answer the whole request; each partition's acknowledgements, answered in its ``error_code``
(RENEW from v2 with ``is_renew_ack``); at epoch -1 the session then closes and the member's
remaining records are released. From v2 the answer carries the group's lock duration.
"""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.build import build
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.share.acks import renew_allowed
from kafkawire.testing.fake.share.sessions import FINAL_EPOCH, INITIAL_EPOCH

from .common import response_for
from .share_common import Answer, acknowledge_partition, member_problem, partition_answers

__all__ = ["handle"]


async def handle(call: Call) -> Any:
    request = call.request
    shares = call.services.shares
    shares.timers.fire_due()
    cls = response_for(call)
    lock_ms = shares.lock_duration_ms(request.group_id or "")
    problem = member_problem(request)
    if problem is not None:
        return build(cls, error_code=Error.INVALID_REQUEST, error_message=problem)
    key = (request.group_id, request.member_id)
    epoch = request.share_session_epoch
    cache = shares.sessions[call.node_id]
    session = (
        Error.INVALID_SHARE_SESSION_EPOCH if epoch == INITIAL_EPOCH else cache.current(key, epoch)
    )
    if isinstance(session, Error):
        return build(
            cls,
            error_code=session,
            error_message=f"{session.name} for share session of member {key[1]}",
            acquisition_lock_timeout_ms=lock_ms,
        )
    if epoch != FINAL_EPOCH:
        cache.advance(session)
    renew = renew_allowed(request)
    answers = {}
    for topic in request.topics:
        for part in topic.partitions:
            where = (topic.topic_id, part.partition_index)
            failure = acknowledge_partition(
                call, key, where, part.acknowledgement_batches, renew=renew
            )
            answers[where] = Answer(acknowledge=failure)
    if epoch == FINAL_EPOCH:
        cache.close(key)
        shares.release_session(call.node_id, session)
    topics, endpoints = partition_answers(cls, call, answers)
    return build(
        cls, acquisition_lock_timeout_ms=lock_ms, responses=topics, node_endpoints=endpoints
    )
