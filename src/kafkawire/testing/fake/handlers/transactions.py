"""AddPartitionsToTxn, AddOffsetsToTxn, EndTxn (at the transaction coordinator) and
TxnOffsetCommit (at the group's coordinator).

The rules are the coordinator's (:mod:`~kafkawire.testing.fake.transactions`); here: the
routing (NOT_COORDINATOR on another node), the answer's shape per version, and PRODUCER_FENCED
spelt INVALID_PRODUCER_EPOCH before the versions of KIP-588 (AddPartitionsToTxn, AddOffsetsToTxn
and EndTxn v2, TxnOffsetCommit v3). AddPartitionsToTxn v4+ is the brokers' batched form
(several transactions, ``verify_only``); Kafka serves it to clients too when no authorizer
forbids it, and so does the fake. TxnOffsetCommit is checked by the transaction (KIP-890's
verification), then by the group (member, instance, generation: ``validate_txn_offset_commit``);
its offsets are held by the transaction and reach the group coordinator's ``commit_offsets``
when EndTxn commits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkawire.testing.fake.build import build, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.transactions import TransactionCoordinator

from .common import each_partition, fenced, response_for

__all__ = ["add_offsets", "add_partitions", "end_txn", "txn_offset_commit"]

_FIRST_FENCED = 2
_FIRST_FENCED_OFFSET_COMMIT = 3
_FIRST_BATCHED = 4


def _not_coordinator(call: Call, key: str) -> bool:
    return call.state.coordinator_for(key) != call.node_id


async def add_partitions(call: Call) -> Any:
    cls = response_for(call)
    request = call.request
    result_cls = part(
        cls,
        "results_by_transaction"
        if call.version >= _FIRST_BATCHED
        else "results_by_topic_v3_and_below",
    )
    if call.version < _FIRST_BATCHED:
        topics = _add(
            call,
            request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            request.v3_and_below_topics,
            verify_only=False,
            topic_cls=result_cls,
        )
        return build(cls, results_by_topic_v3_and_below=topics)
    topic_cls = part(result_cls, "topic_results")
    results = tuple(
        build(
            result_cls,
            transactional_id=txn.transactional_id,
            topic_results=_add(
                call,
                txn.transactional_id,
                txn.producer_id,
                txn.producer_epoch,
                txn.topics,
                verify_only=txn.verify_only,
                topic_cls=topic_cls,
            ),
        )
        for txn in request.transactions
    )
    return build(cls, error_code=Error.NONE, results_by_transaction=results)


def _add(
    call: Call,
    txn_id: str,
    producer_id: int,
    epoch: int,
    topics: Any,
    *,
    verify_only: bool,
    topic_cls: type[Any],
) -> tuple[Any, ...]:
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    if _not_coordinator(call, txn_id):
        errors = dict.fromkeys(wanted, Error.NOT_COORDINATOR)
    else:
        errors = call.services.transactions.add_partitions(
            txn_id, producer_id, epoch, wanted, verify_only=verify_only
        )
    partition_cls = part(topic_cls, "results_by_partition")
    return tuple(
        build(
            topic_cls,
            name=t.name,
            results_by_partition=tuple(
                build(
                    partition_cls,
                    partition_index=p,
                    partition_error_code=fenced(errors[(t.name, p)], call.version, _FIRST_FENCED),
                )
                for p in t.partitions
            ),
        )
        for t in topics
    )


def _at_coordinator(call: Call, action: Callable[[TransactionCoordinator, Any], Error]) -> Error:
    """``action``'s answer if this node coordinates the request's transactional id."""
    if _not_coordinator(call, call.request.transactional_id):
        return Error.NOT_COORDINATOR
    return action(call.services.transactions, call.request)


async def add_offsets(call: Call) -> Any:
    error = _at_coordinator(
        call,
        lambda txns, r: txns.add_offsets(
            r.transactional_id, r.producer_id, r.producer_epoch, r.group_id
        ),
    )
    return build(response_for(call), error_code=fenced(error, call.version, _FIRST_FENCED))


async def end_txn(call: Call) -> Any:
    request = call.request
    error = _at_coordinator(
        call,
        lambda txns, r: txns.end(
            r.transactional_id, r.producer_id, r.producer_epoch, committed=r.committed
        ),
    )
    ok = error is Error.NONE
    return build(
        response_for(call),
        error_code=fenced(error, call.version, _FIRST_FENCED),
        producer_id=request.producer_id if ok else -1,
        producer_epoch=request.producer_epoch if ok else -1,
    )


async def txn_offset_commit(call: Call) -> Any:
    state = call.state
    request = call.request
    offsets = {
        (t.name, p.partition_index): (
            p.committed_offset,
            getattr(p, "committed_leader_epoch", -1),
            p.committed_metadata,
        )
        for t in request.topics
        for p in t.partitions
    }
    missing = {tp for tp in offsets if state.partition(*tp) is None}
    if not request.group_id:
        error = Error.INVALID_GROUP_ID
    elif state.coordinator_for(request.group_id) != call.node_id:
        error = Error.NOT_COORDINATOR
    else:
        error = _hold_offsets(
            call, {tp: offset for tp, offset in offsets.items() if tp not in missing}
        )
    error = fenced(error, call.version, _FIRST_FENCED_OFFSET_COMMIT)

    def answer(topic: str, asked: Any) -> dict[str, Any]:
        missed = (topic, asked.partition_index) in missing
        return {
            "partition_index": asked.partition_index,
            "error_code": Error.UNKNOWN_TOPIC_OR_PARTITION if missed else error,
        }

    return build(response_for(call), topics=each_partition(call, answer))


def _hold_offsets(call: Call, offsets: dict[tuple[str, int], tuple[int, int, str | None]]) -> Error:
    """A TxnOffsetCommit at the group's coordinator: the transaction's verification, then the
    group's checks of member, instance and generation (v3+ send them), then the offsets are
    held until EndTxn."""
    request = call.request
    txns = call.services.transactions
    error = txns.verify_offsets(
        request.transactional_id, request.producer_id, request.producer_epoch, request.group_id
    )
    if error is Error.NONE:
        error = Error(
            call.services.groups.validate_txn_offset_commit(
                request.group_id,
                getattr(request, "member_id", ""),
                getattr(request, "group_instance_id", None),
                getattr(request, "generation_id", -1),
            )
        )
    if error is Error.NONE:
        txns.hold_offsets(request.transactional_id, request.group_id, offsets)
    return error
