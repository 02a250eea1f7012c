"""What a share group member holds: the records it acquired and has not answered for, and the
acknowledgements waiting to go, each with its outcome.

Rules kept here:

- A record is held from the ShareFetch that acquired it until its acknowledgement is queued.
  It belongs to the broker it came from and to that broker's session incarnation
  (:mod:`.session`): its acknowledgement goes there, and fails at once if that session ended
  (the broker released the record then).
- An acquisition of an offset already held, with the same delivery count, is no new delivery:
  librdkafka's mock lists again in every ShareFetch answer the records a member still holds
  (Kafka never does), and handing them out again would deliver a record twice. A higher
  delivery count is a new delivery (the lock expired and the record came back): it replaces
  the old one.
- Each queued acknowledgement is a :class:`Ticket` (one partition's offsets, one broker and
  session incarnation) whose outcome, once the broker answers or the session ends, is an error
  or ``None``; ``commit`` waits for its tickets, and every outcome reaches the acknowledgement
  commit callback, which runs in the application's calls.
- A ticket the broker refused with an error worth retrying is queued again
  (:meth:`Holdings.retry`), to go once its backoff is over, until its deadline
  (``retry_for`` seconds after it was made: Java's deadline of a commit); it keeps its own
  offsets and outcome (acknowledgements made since go in a new ticket).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafkawire.cluster import Backoff, CallTimeoutError, TopicPartition
from kafkawire.consumer.fetching.record import ConsumerRecord
from kafkawire.errors import KafkawireError

from .acknowledgements import AcknowledgeType, wire_batches
from .session import Acks, PartitionId

__all__ = [
    "Delivery",
    "Holdings",
    "Ticket",
    "acknowledging",
    "retried_ack_error",
    "wire_acks",
]

_log = logging.getLogger(__name__)

RENEW = AcknowledgeType.RENEW
# A moved leader, a partition or topic the broker does not have: the records acquired there
# were released (or never were), so their acknowledgements cannot succeed by trying again.
_NOT_RETRIED = (6, 74, 3, 100)  # NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_TOPIC_...


def retried_ack_error(error: KafkawireError) -> bool:
    """Whether acknowledgements refused with ``error`` are sent again (Java's
    ``ShareConsumeRequestManager.handlePartitionError``)."""
    return error.retriable and getattr(error, "code", None) not in _NOT_RETRIED


@dataclass(slots=True, eq=False)
class Delivery:
    """One acquisition of one record by this member."""

    node: int
    incarnation: int
    delivery_count: int
    record: ConsumerRecord | None = None  # once handed out


@dataclass(slots=True, eq=False)
class Ticket:
    """Acknowledgements of one partition's offsets (offset -> type), bound for one broker's
    session incarnation, and their outcome (``done``: an error, or ``None``)."""

    tp: TopicPartition
    node: int
    incarnation: int
    acks: dict[int, int]
    deadline: float  # time.monotonic() past which a refusal is not retried
    renewing: dict[int, Delivery] = field(default_factory=dict)  # held again once renewed
    done: asyncio.Future[KafkawireError | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    failures: int = 0  # refusals retried
    last_error: KafkawireError | None = None
    not_before: float = 0.0  # a retry waits for its backoff

    def settle(self, error: KafkawireError | None) -> None:
        if not self.done.done():
            self.done.set_result(error)

    def timed_out(self, seconds: float) -> CallTimeoutError:
        """The outcome of a ticket not settled within ``seconds``: a timeout naming the
        partition, the broker and the last refusal (its cause)."""
        what = acknowledging(self.tp, self.node)
        return CallTimeoutError.after(what, seconds, self.failures, self.last_error)


class Holdings:
    """The records this member holds, and the tickets of the acknowledgements it queued."""

    def __init__(self, *, retry_for: float = 60.0) -> None:
        self._retry_for = retry_for
        self._held: dict[TopicPartition, dict[int, Delivery]] = {}
        self._queued: dict[int, list[Ticket]] = {}  # broker -> tickets not sent yet
        self.settled: deque[Ticket] = deque()  # outcomes the callback has not heard yet
        self.renewed: deque[ConsumerRecord] = deque()  # renewed: to be delivered again
        self.unsettled: set[Ticket] = set()  # queued or under way

    # --- acquiring ---------------------------------------------------------------------------

    def acquire(
        self,
        tp: TopicPartition,
        node: int,
        incarnation: int,
        acquired: Iterable[tuple[int, int, int]],
    ) -> dict[int, int]:
        """Record the ``(first_offset, last_offset, delivery_count)`` ranges a ShareFetch
        acquired; the offsets that are new deliveries (offset -> delivery count, in order)."""
        held = self._held.setdefault(tp, {})
        new: dict[int, int] = {}
        for first, last, count in acquired:
            for offset in range(first, last + 1):
                had = held.get(offset)
                if had is not None and had.delivery_count >= count and had.node == node:
                    continue  # held already (the mock sends it again)
                held[offset] = Delivery(node, incarnation, count)
                new[offset] = count
        return dict(sorted(new.items()))

    def handed_out(self, tp: TopicPartition, records: Iterable[ConsumerRecord]) -> None:
        """``records`` of ``tp`` went to the application."""
        held = self._held[tp]
        for record in records:
            delivery = held.get(record.offset)
            if delivery is not None:
                delivery.record = record

    def holds(self, tp: TopicPartition, offset: int) -> bool:
        return offset in self._held.get(tp, {})

    def delivery(self, tp: TopicPartition, offset: int) -> Delivery | None:
        return self._held.get(tp, {}).get(offset)

    def forget(self, tp: TopicPartition, offsets: Iterable[int]) -> None:
        """Stop holding ``offsets`` without answering (their session ended)."""
        held = self._held.get(tp, {})
        for offset in offsets:
            held.pop(offset, None)

    # --- acknowledging -----------------------------------------------------------------------

    def queue(self, tp: TopicPartition, acks: Mapping[int, int]) -> list[Ticket]:
        """Queue ``acks`` of held records (others are ignored: answered already), in the
        ticket of their broker and session incarnation not sent yet (a new one if none)."""
        held = self._held.get(tp, {})
        tickets: dict[tuple[int, int], Ticket] = {}
        for offset, kind in acks.items():
            delivery = held.pop(offset, None)
            if delivery is None:
                continue
            key = (delivery.node, delivery.incarnation)
            ticket = tickets.get(key)
            if ticket is None:
                ticket = tickets[key] = self._ticket(tp, *key)
            ticket.acks[offset] = kind
            if kind == RENEW:
                ticket.renewing[offset] = delivery
        return list(tickets.values())

    def _ticket(self, tp: TopicPartition, node: int, incarnation: int) -> Ticket:
        """The ticket of ``tp`` queued for ``node`` not sent yet, else a new one."""
        queued = self._queued.setdefault(node, [])
        for ticket in reversed(queued):
            if ticket.tp == tp and ticket.incarnation == incarnation and not ticket.failures:
                return ticket
        ticket = Ticket(tp, node, incarnation, {}, time.monotonic() + self._retry_for)
        queued.append(ticket)
        self.unsettled.add(ticket)
        return ticket

    def queued_for(self, node: int, now: float) -> list[Ticket]:
        """The tickets queued for ``node`` that may go at ``now``."""
        return [t for t in self._queued.get(node, ()) if t.not_before <= now]

    def nodes_with_queued(self, now: float | None = None) -> list[int]:
        """The brokers with tickets queued (that may go at ``now``, if given)."""
        return [
            node for node in self._queued if self.queued_for(node, math.inf if now is None else now)
        ]

    def next_retry(self) -> float | None:
        """When the first ticket waiting for its backoff may go (``None``: none waits)."""
        return min((t.not_before for q in self._queued.values() for t in q), default=None)

    def take_queued(
        self,
        node: int,
        partitions: set[TopicPartition] | None = None,
        *,
        now: float | None = None,
    ) -> list[Ticket]:
        """Remove and return the tickets queued for ``node`` (of ``partitions`` only, and
        that may go at ``now``, if given)."""
        queued = self._queued.get(node, [])
        taken = [
            t
            for t in queued
            if (partitions is None or t.tp in partitions) and (now is None or t.not_before <= now)
        ]
        self._queued[node] = [t for t in queued if t not in taken]
        return taken

    def refused(
        self, tickets: Iterable[Ticket], error: KafkawireError, backoff: Backoff
    ) -> list[Ticket]:
        """``tickets`` were refused with ``error`` (one worth retrying): each is queued again,
        to go after its ``backoff`` (cut to its deadline); those past their deadline are
        returned instead, to fail."""
        now = time.monotonic()
        expired = []
        for ticket in tickets:
            ticket.failures += 1
            ticket.last_error = error
            left = ticket.deadline - now
            if left <= 0:
                expired.append(ticket)
                continue
            delay = min(left, backoff.after(ticket.failures))
            _log.debug(
                "acknowledgements of %s to broker %d refused (%s): again in %.3g s",
                ticket.tp,
                ticket.node,
                error,
                delay,
            )
            ticket.not_before = now + delay
            self._queued.setdefault(ticket.node, []).append(ticket)
        return expired

    def settle(self, tickets: Iterable[Ticket], error: KafkawireError | None) -> None:
        """The outcome of ``tickets``: recorded for the callback, and their waiters woken. A
        record renewed is held again and delivered again (Java's renew: the next poll returns
        it, to be acknowledged); one whose renewal failed is left to its lock's expiry."""
        for ticket in tickets:
            if ticket.done.done():
                continue
            ticket.settle(error)
            self.unsettled.discard(ticket)
            self.settled.append(ticket)
            if error is None and ticket.renewing:
                held = self._held.setdefault(ticket.tp, {})
                for offset, delivery in ticket.renewing.items():
                    held[offset] = delivery
                    if delivery.record is not None:
                        self.renewed.append(delivery.record)


def acknowledging(tp: TopicPartition, node: int) -> str:
    """What an acknowledgement of ``tp``'s records to broker ``node`` is called in errors."""
    return f"acknowledging records of {tp.topic}/{tp.partition} to broker {node}"


def wire_acks(tickets: list[Ticket], partitions: Mapping[TopicPartition, PartitionId]) -> Acks:
    """The tickets' acknowledgements as wire batches, by partition (``partitions``: their
    share ids)."""
    merged: dict[PartitionId, dict[int, int]] = {}
    for ticket in tickets:
        merged.setdefault(partitions[ticket.tp], {}).update(ticket.acks)
    return {pid: wire_batches(acks) for pid, acks in merged.items()}
