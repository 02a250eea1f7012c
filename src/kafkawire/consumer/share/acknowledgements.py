"""How a share group member answers for the records it acquired: the acknowledge types, and the
acknowledgement batches of ShareFetch and ShareAcknowledge requests (no I/O).

Rules (KIP-932, Kafka's Java ``Acknowledgements``):

- Each acquired record is answered once: ACCEPT (processed), RELEASE (deliver it again, to any
  member), REJECT (unprocessable: never again), RENEW (KIP-1222, ShareAcknowledge v2 only:
  still processing, extend the acquisition lock). GAP (0, not public) answers an acquired
  offset with no record behind it (compacted away, or a transaction marker).
- On the wire, offsets go as batches of consecutive offsets, each with one type per offset, or
  a single type for the whole batch (what Java sends when every offset of the batch has the
  same type): here a batch is a run of consecutive offsets of one type, so it is always the
  single-type form.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import NamedTuple

__all__ = ["GAP", "AcknowledgeType", "WireBatch", "wire_batches"]

GAP = 0
"""The type of an acquired offset without a record."""


class AcknowledgeType(IntEnum):
    """What a share consumer says of a record it was delivered (Java's ``AcknowledgeType``,
    with the wire values)."""

    ACCEPT = 1
    """Processed: the record is done for the group."""
    RELEASE = 2
    """Not processed: deliver it again (its delivery count goes up; past the group's delivery
    limit it is archived)."""
    REJECT = 3
    """Unprocessable: the record is archived, never delivered again."""
    RENEW = 4
    """Still being processed: extend the acquisition lock (KIP-1222; brokers serving
    ShareAcknowledge v2, Kafka 4.2 and later); the record is delivered again by the next poll,
    to be acknowledged."""


class WireBatch(NamedTuple):
    """Consecutive offsets ``first_offset`` to ``last_offset`` with one acknowledge type."""

    first_offset: int
    last_offset: int
    acknowledge_type: int


def wire_batches(acks: Mapping[int, int]) -> list[WireBatch]:
    """``acks`` (offset -> acknowledge type, or :data:`GAP`) as runs of consecutive offsets of
    one type, in offset order."""
    batches: list[WireBatch] = []
    first = last = kind = -1
    for offset in sorted(acks):
        this = acks[offset]
        if offset == last + 1 and this == kind:
            last = offset
            continue
        if kind >= 0:
            batches.append(WireBatch(first, last, kind))
        first = last = offset
        kind = this
    if kind >= 0:
        batches.append(WireBatch(first, last, kind))
    return batches
