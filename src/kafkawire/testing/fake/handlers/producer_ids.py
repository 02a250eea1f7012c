"""InitProducerId (v0-6): producer ids for idempotent and transactional producers.

The rules are the transaction coordinator's (:mod:`~kafkawire.testing.fake.transactions`).
A transactional id must be asked of its coordinator (NOT_COORDINATOR elsewhere), and may not
be empty (INVALID_REQUEST). Two-phase commit (KIP-939, v6) is not enabled, as on a broker
without ``transaction.two.phase.commit.enable``. Before v4, PRODUCER_FENCED is spelt
INVALID_PRODUCER_EPOCH.
"""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.build import build
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error

from .common import fenced, response_for

__all__ = ["handle"]

_FIRST_FENCED = 4


async def handle(call: Call) -> Any:
    cls = response_for(call)
    request = call.request
    txn_id = request.transactional_id
    if txn_id == "":
        error, producer_id, epoch = Error.INVALID_REQUEST, -1, -1
    elif txn_id is not None and call.state.coordinator_for(txn_id) != call.node_id:
        error, producer_id, epoch = Error.NOT_COORDINATOR, -1, -1
    elif getattr(request, "enable_2pc", False):
        error, producer_id, epoch = Error.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, -1
    else:
        error, producer_id, epoch = _assign(call, txn_id)
    return build(
        cls,
        error_code=fenced(error, call.version, _FIRST_FENCED),
        producer_id=producer_id,
        producer_epoch=epoch,
    )


def _assign(call: Call, txn_id: str | None) -> tuple[Error, int, int]:
    request = call.request
    return call.services.transactions.init_producer_id(
        txn_id,
        request.transaction_timeout_ms,
        getattr(request, "producer_id", -1),
        getattr(request, "producer_epoch", -1),
    )
