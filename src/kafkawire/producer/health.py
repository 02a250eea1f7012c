"""``Producer.health()``: whether the producer is making progress, and why not.

The rules, each a reason when it holds (``healthy`` when none does):

- not started;
- a background task failed (the sender, a request), which ends the producer: its error;
- closed;
- the sender task is not running though the producer is open;
- the oldest batch waiting (queued or in flight) is older than ``linger_ms +
  request_timeout_ms``: it should have been sent and answered by then;
- brokers are unreachable (their last connects or requests failed).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from kafkawire.client.observability import ClientHealth, broker_problems
from kafkawire.cluster import Cluster
from kafkawire.cluster.supervisor import Supervisor

from .accumulator import RecordAccumulator
from .settings import ProducerSettings

__all__ = ["ProducerHealth", "producer_health"]


@dataclass(frozen=True, slots=True)
class ProducerHealth(ClientHealth):
    """:meth:`Producer.health`'s answer: ``healthy``, ``reasons`` and the facts."""

    sender_running: bool
    failure: str | None
    """What ended the producer, if something did."""
    batches_waiting: int
    """Batches queued or in flight."""
    oldest_batch_age_s: float | None
    """Seconds since the oldest of them got its first record (``None``: there is none)."""


def producer_health(
    settings: ProducerSettings,
    accumulator: RecordAccumulator | None,
    sender: asyncio.Task[None] | None,
    tasks: Supervisor,
    cluster: Cluster,
) -> ProducerHealth:
    """The report on a producer of ``settings``: its accumulator and sender task (``None``
    before it starts), its supervisor and cluster."""
    reasons: list[str] = []
    now = time.monotonic()
    batch_ages = [] if accumulator is None else [now - b.created for b in accumulator.unfinished]
    oldest = max(batch_ages, default=None)
    overdue_after_ms = settings.linger_ms + settings.request_timeout_ms
    failure = tasks.failure
    sender_running = sender is not None and not sender.done()
    if accumulator is None:
        reasons.append("not started: use `async with` or start()")
    elif failure is not None:
        reasons.append(f"failed, every send raises: {failure}")
    elif accumulator.closed:
        reasons.append("closed")
    elif not sender_running:
        reasons.append("the sender task is not running")
    if oldest is not None and oldest * 1000 > overdue_after_ms:
        reasons.append(
            f"the oldest of {len(batch_ages)} batches has waited {oldest:.1f} s, more than "
            f"linger_ms + request_timeout_ms ({overdue_after_ms} ms)"
        )
    brokers, broker_reasons = broker_problems(cluster)
    reasons += broker_reasons
    return ProducerHealth(
        healthy=not reasons,
        reasons=tuple(reasons),
        unreachable_brokers=brokers,
        sender_running=sender_running,
        failure=None if failure is None else str(failure),
        batches_waiting=len(batch_ages),
        oldest_batch_age_s=oldest,
    )
