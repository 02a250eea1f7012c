"""Rebalance callbacks: what the application hears when partitions come and go."""

from __future__ import annotations

import inspect
import logging
from typing import Any

from kafkawire.cluster import TopicPartition

__all__ = ["ConsumerRebalanceListener", "notify"]

_log = logging.getLogger(__name__)


class ConsumerRebalanceListener:
    """Subclass it and pass it to ``subscribe``; each method may be sync or ``async``.

    They are called from the consumer's ``getmany`` (and iteration), before it hands out more
    records, with either group protocol (rebalances act in the poll: see
    :mod:`kafkawire.consumer.group`), so committing there covers the records the last call
    returned. (``close`` calls ``on_partitions_revoked`` too, or ``on_partitions_lost`` for a
    member thrown out; a member whose membership ends with a fatal error, such as a fenced
    static member, hears ``on_partitions_lost`` at once.)

    - ``on_partitions_revoked``: the member gives these up in an orderly rebalance; the
      consumer has committed their positions (with auto-commit) just before. Commit here
      what auto-commit does not cover.
    - ``on_partitions_assigned``: these are now the member's (positions are known, unless
      looking up the committed offsets failed for a while: that goes on in the background).
    - ``on_partitions_lost``: these were taken away without a chance to commit (the member
      was thrown out of the group: session expired, or fenced; it left for not polling
      within ``max_poll_interval_ms``; or a fatal group error); another member may already
      be reading them.
    """

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> Any:
        """Called before ``revoked`` are given up."""

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> Any:
        """Called once ``assigned`` are this member's."""

    def on_partitions_lost(self, lost: set[TopicPartition]) -> Any:
        """Called when ``lost`` were taken away; by default, as a revocation."""
        return self.on_partitions_revoked(lost)


async def notify(listener: ConsumerRebalanceListener | None, event: str, tps: set[Any]) -> None:
    """Call ``listener``'s ``on_partitions_<event>``; its errors are logged, not raised:
    a rebalance goes on whatever the application's callback does (as in the Java client)."""
    if listener is None:
        return
    try:
        result = getattr(listener, f"on_partitions_{event}")(tps)
        if inspect.isawaitable(result):
            await result
    except Exception:
        _log.exception("the rebalance listener's on_partitions_%s failed", event)
