"""Counting the deliveries of a long run of sends in bounded memory.

``produce`` used to keep every record's delivery until the end: 1M lines grew the command to
hundreds of MB. A :class:`DeliveryTally` keeps only the deliveries not yet counted, counts
them as they complete (they complete about in the order they were sent), and when
``max_pending`` of them wait, waits for the oldest: memory stays bounded however long the
input, and what is kept is the summary (records written, partitions, failures).
"""

from __future__ import annotations

import contextlib
from collections import deque

from kafkawire.errors import KafkawireError
from kafkawire.producer.batch import Delivery

__all__ = ["DeliveryTally"]


class DeliveryTally:
    """How many records were written, to which partitions, and how many failed (and why the
    first did), of the deliveries :meth:`add` was given."""

    def __init__(self, max_pending: int = 65536) -> None:
        self._pending: deque[Delivery] = deque()
        self._max_pending = max_pending
        self.written = 0
        self.failed = 0
        self.first_failure: KafkawireError | None = None
        self.partitions: set[int] = set()

    @property
    def waiting(self) -> int:
        """How many deliveries are held, not yet counted."""
        return len(self._pending)

    async def add(self, delivery: Delivery) -> None:
        pending = self._pending
        pending.append(delivery)
        if len(pending) > self._max_pending:
            with contextlib.suppress(KafkawireError):  # a failure is counted below
                await pending[0]
        while pending and pending[0].done():
            self._count(pending.popleft())

    def settle(self) -> None:
        """Count what is left: call once every delivery is done (the producer flushed)."""
        while self._pending:
            self._count(self._pending.popleft())

    def _count(self, delivery: Delivery) -> None:
        try:
            self.partitions.add(delivery.result().partition)
        except KafkawireError as exc:
            self.failed += 1
            self.first_failure = self.first_failure or exc
        else:
            self.written += 1
