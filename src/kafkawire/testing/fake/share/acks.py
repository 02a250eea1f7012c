"""Reading the acknowledgement batches of a ShareFetch or ShareAcknowledge, with the checks
Kafka makes before any reaches a share partition (``KafkaApis.validateAcknowledgementBatches``).

A partition's batches are INVALID_REQUEST (and none of them applied) when one has its first
offset after its last, starts before the previous one ended, has no acknowledge types, has
more than one type but not one per offset, or a type outside GAP..REJECT; RENEW (4) is allowed
only from version 2 with ``is_renew_ack`` set (KIP-1222).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafkawire.testing.fake.codes import Error

from .partition import AckBatch, AckFailure
from .records import AcknowledgeType

__all__ = ["read_batches", "renew_allowed"]

_RENEW_VERSION = 2


def renew_allowed(request: Any) -> bool:
    """Whether the request may carry RENEW acknowledgements."""
    return request.__version__ >= _RENEW_VERSION and bool(getattr(request, "is_renew_ack", False))


def read_batches(batches: Iterable[Any], *, renew: bool) -> list[AckBatch] | AckFailure:
    """A partition's batches from the wire, or why Kafka refuses them."""
    highest = AcknowledgeType.RENEW if renew else AcknowledgeType.REJECT
    read: list[AckBatch] = []
    previous_last = -1
    for batch in batches:
        first, last, types = batch.first_offset, batch.last_offset, tuple(batch.acknowledge_types)
        problem = None
        if first > last:
            problem = f"first offset {first} is after last offset {last}"
        elif first < previous_last:
            problem = f"batch from {first} overlaps the one before, which ends at {previous_last}"
        elif not types:
            problem = f"batch {first}-{last} has no acknowledge types"
        elif len(types) > 1 and len(types) != last - first + 1:
            problem = f"batch {first}-{last} has {len(types)} acknowledge types"
        elif any(not 0 <= t <= highest for t in types):
            problem = f"batch {first}-{last} has an invalid acknowledge type in {list(types)}"
        if problem is not None:
            return AckFailure(Error.INVALID_REQUEST, problem)
        previous_last = last
        read.append(AckBatch(first, last, tuple(AcknowledgeType(t) for t in types)))
    return read
