"""Auto-commit, as Kafka's Java client does it: from the application's poll (the rule of
:mod:`kafkawire.consumer.group`).

Every ``auto_commit_interval_ms``, a poll (``getmany``, or the next step of an iteration)
commits the positions after what the earlier polls returned, *before* it hands out more:
nothing the application has not processed is committed, and a consumer that crashes
mid-batch leaves that batch to be read again (at least once). A background timer would commit
records still being processed.

The commit goes beside the poll (it does not hold it up), one at a time; a commit made by the
application or before a revocation first waits for the one in flight, so that an older
auto-commit cannot land after a newer commit. A failed auto-commit is logged and the next
interval tries again (an error it does not expect reaches the application:
:mod:`kafkawire.consumer.tasks`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.commits import OffsetAndMetadata
from kafkawire.consumer.tasks import BackgroundTasks
from kafkawire.errors import KafkawireError

__all__ = ["AutoCommitter"]

_log = logging.getLogger(__name__)

Offsets = Mapping[TopicPartition, OffsetAndMetadata]


class AutoCommitter:
    """The auto-commit clock of one consumer, and the commit it has in flight."""

    def __init__(
        self, interval_ms: int, commit: Callable[[Offsets], Awaitable[None]], tasks: BackgroundTasks
    ) -> None:
        self._interval = interval_ms / 1000
        self._commit = commit
        self._tasks = tasks
        self._next = time.monotonic() + self._interval
        self._in_flight: asyncio.Task[None] | None = None

    def poll(self, consumed: Callable[[], Offsets]) -> None:
        """At a poll: if the interval has passed, commit ``consumed()`` (taken now)."""
        if time.monotonic() < self._next:
            return
        if self._in_flight is not None and not self._in_flight.done():
            return  # still sending the last one: the next poll tries
        self._next = time.monotonic() + self._interval
        offsets = consumed()
        if offsets:
            self._in_flight = self._tasks.spawn("auto-commit", lambda: self._send(offsets))

    async def _send(self, offsets: Offsets) -> None:
        try:
            await self._commit(offsets)
        except (KafkawireError, OSError) as exc:
            _log.warning(
                "auto-commit of %d partitions failed (next interval retries): %s", len(offsets), exc
            )

    async def settled(self) -> None:
        """Wait for the auto-commit in flight, if any (its errors are already logged)."""
        if self._in_flight is not None:
            await asyncio.gather(self._in_flight, return_exceptions=True)
