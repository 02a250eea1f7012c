"""FindCoordinator (v0-6): the node of a group's or transactional id's coordinator.

One key before v4, a list of keys (``coordinator_keys``) from v4. Key types: 0 a group, 1 a
transactional id (INVALID_REQUEST for an empty one, as Kafka); others are INVALID_REQUEST.
With no broker running the answer would be COORDINATOR_NOT_AVAILABLE.
"""

from __future__ import annotations

from typing import Any

from kafkawire.testing.fake.build import build, part
from kafkawire.testing.fake.call import Call
from kafkawire.testing.fake.codes import Error
from kafkawire.testing.fake.state import ClusterState

from .common import response_for

__all__ = ["handle"]

_GROUP, _TRANSACTION = 0, 1
_FIRST_BATCHED = 4


async def handle(call: Call) -> Any:
    cls = response_for(call)
    request = call.request
    key_type = getattr(request, "key_type", _GROUP)
    if call.version < _FIRST_BATCHED:
        error, node, host, port = _find(call.state, key_type, request.key)
        return build(cls, error_code=error, error_message=None, node_id=node, host=host, port=port)
    entry = part(cls, "coordinators")
    answers = []
    for key in request.coordinator_keys:
        error, node, host, port = _find(call.state, key_type, key)
        answers.append(build(entry, key=key, node_id=node, host=host, port=port, error_code=error))
    return build(cls, coordinators=tuple(answers))


def _find(state: ClusterState, key_type: int, key: str) -> tuple[Error, int, str, int]:
    if key_type not in (_GROUP, _TRANSACTION) or (key_type == _TRANSACTION and not key):
        return Error.INVALID_REQUEST, -1, "", -1
    node = state.coordinator_for(key)
    if node < 0:
        return Error.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    broker = state.brokers[node]
    return Error.NONE, node, broker.host, broker.port
