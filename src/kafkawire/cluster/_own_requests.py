"""The requests the cluster layer makes for itself, built at the version a broker serves:
Metadata (brokers, topics, leaders) and FindCoordinator (who coordinates a group or a
transactional id); and how it reads their answers."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any

from kafkawire.errors import KafkawireError, error_for_code
from kafkawire.messages import request_type
from kafkawire.messages.find_coordinator import v6 as find_coordinator_latest
from kafkawire.messages.metadata import v13 as metadata_latest
from kafkawire.protocol import convert

from ._routing import GROUP, RoutingError

__all__ = [
    "FIND_COORDINATOR",
    "coordinator_of",
    "find_coordinator_request",
    "metadata_request",
    "top_level_error",
]

FIND_COORDINATOR = find_coordinator_latest.FindCoordinatorRequest.__api_key__


def metadata_request(
    topics: Collection[str] | None, version: int, *, auto_create: bool = False
) -> Any:
    """A MetadataRequest at ``version`` that asks for ``topics``, creating those missing only
    with ``auto_create`` (before v4 the broker's configuration alone decides)."""
    # All topics is null from v1 and an empty list at v0: convert() spells it for the version.
    request = metadata_latest.MetadataRequest(
        topics=None
        if topics is None
        else tuple(metadata_latest.MetadataRequestTopic(name=t) for t in topics),
        allow_auto_topic_creation=auto_create,
    )
    if version < 4:  # the field does not exist before v4: it was always as if true
        request = dataclasses.replace(request, allow_auto_topic_creation=True)
    return convert(request, version)


def find_coordinator_request(version: int, key: str, key_type: int) -> Any:
    """A FindCoordinator request at ``version`` for one group (``key_type`` 0) or
    transactional id (1)."""
    request_cls = request_type(FIND_COORDINATOR, version)
    if version >= 4:
        return request_cls(key_type=key_type, coordinator_keys=(key,))
    if version >= 1:  # before batching: one key in its own field
        return request_cls(key_type=key_type, key=key)
    if key_type == GROUP:
        return request_cls(key=key)
    raise RoutingError("FindCoordinator v0 cannot find transaction coordinators")


def coordinator_of(response: Any) -> int:
    """The node id a FindCoordinator response names, or its error raised."""
    found = response.coordinators[0] if response.__version__ >= 4 else response
    # v0 has no error_message.
    error = error_for_code(found.error_code, getattr(found, "error_message", None))
    if error is not None:
        raise error
    return int(found.node_id)


def top_level_error(response: Any) -> KafkawireError | None:
    code = getattr(response, "error_code", 0)
    return error_for_code(code, getattr(response, "error_message", None)) if code else None
