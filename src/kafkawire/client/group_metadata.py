"""Who a consumer group member is, as a value the producer and the consumer share.

A consumer hands it out (``Consumer.group_metadata()``) and a transactional producer sends
it with the offsets it commits (``Producer.send_offsets_to_transaction``), so the group
coordinator can fence a member the group has moved on from (KIP-447). It lives below both
clients, which are independent siblings.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ConsumerGroupMetadata"]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadata:
    """A group member's identity, as Kafka's Java ``ConsumerGroupMetadata``: the group, the
    generation (a KIP-848 member's epoch) and member id it holds (``-1`` and ``""`` outside
    a group, which only the group id names), and its static instance id."""

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
