"""``Consumer.health()``: whether the consumer is making progress, and why not.

The rules, each a reason when it holds (``healthy`` when none does):

- not started, or closed;
- an error waits for the application (a background task failed, the group membership ended
  for good, or an error the next ``getmany`` raises): it is named;
- in a group, the member is not STABLE (joining, rebalancing, thrown out, left for not
  polling, failed): its state is named;
- partitions are to be fetched but no Fetch was answered for ``fetch_max_wait_ms +
  request_timeout_ms`` (since the start, before the first answer): a long poll answers
  within ``fetch_max_wait_ms``, and a request within its timeout;
- partitions are stopped by an error until the application seeks them;
- the application has not called ``getmany`` for ``max_poll_interval_ms`` (in a group, the
  member then leaves);
- brokers are unreachable (their last connects or requests failed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kafkawire.client.observability import ClientHealth, broker_problems
from kafkawire.cluster import Cluster

from .fetching.fetcher import Fetcher
from .fetching.subscription import SubscriptionState
from .group.member_state import MemberState
from .group.membership import GroupMembership
from .inbox import Inbox
from .metrics import ConsumerMetrics
from .settings import ConsumerSettings

__all__ = ["ConsumerHealth", "consumer_health"]


@dataclass(frozen=True, slots=True)
class ConsumerHealth(ClientHealth):
    """:meth:`Consumer.health`'s answer: ``healthy``, ``reasons`` and the facts."""

    failure: str | None
    """The error the application's next call raises, if one waits."""
    member_state: str | None
    """In a group, the member's state (``"STABLE"``, ``"JOINING"``, ...); else ``None``."""
    assigned_partitions: int
    fetchable_partitions: int
    """Assigned partitions with a position, neither paused nor stopped."""
    stopped_partitions: int
    """Partitions an error stopped until they are seeked."""
    last_fetch_seconds_ago: float | None
    """Since the last Fetch answered (``None``: none yet)."""
    last_poll_seconds_ago: float | None
    """Since the application last called ``getmany`` (``None``: never)."""


@dataclass(frozen=True, slots=True)
class ConsumerParts:
    """What the report reads of a consumer."""

    settings: ConsumerSettings
    cluster: Cluster
    subscriptions: SubscriptionState
    fetcher: Fetcher
    inbox: Inbox
    metrics: ConsumerMetrics
    group: GroupMembership | None


def consumer_health(parts: ConsumerParts, *, started: bool, closed: bool) -> ConsumerHealth:
    fetcher = parts.fetcher
    now = time.monotonic()
    waiting = parts.inbox.waiting
    state = None if parts.group is None else parts.group.state
    fetchable = len(parts.subscriptions.fetchable())
    stopped = fetcher.stopped_partitions()
    last_poll = parts.metrics.last_poll_at
    brokers, broker_reasons = broker_problems(parts.cluster)
    if not started:
        reasons = ["not started: use `async with` or start()"]
    elif closed:
        reasons = ["closed"]
    else:
        reasons = _running_problems(parts, now, state, fetchable, stopped) + broker_reasons
    last_answer = fetcher.last_answer_at
    return ConsumerHealth(
        healthy=not reasons,
        reasons=tuple(reasons),
        unreachable_brokers=brokers,
        failure=None if waiting is None else str(waiting),
        member_state=None if state is None else state.name,
        assigned_partitions=len(parts.subscriptions.assigned()),
        fetchable_partitions=fetchable,
        stopped_partitions=stopped,
        last_fetch_seconds_ago=None if last_answer is None else now - last_answer,
        last_poll_seconds_ago=None if last_poll is None else now - last_poll,
    )


def _running_problems(
    parts: ConsumerParts, now: float, state: MemberState | None, fetchable: int, stopped: int
) -> list[str]:
    """The reasons of a started consumer, not closed (the module doc's rules)."""
    settings, fetcher = parts.settings, parts.fetcher
    reasons: list[str] = []
    waiting = parts.inbox.waiting
    if waiting is not None:
        reasons.append(f"an error waits for the next call: {waiting}")
    if state is not None and state is not MemberState.STABLE:
        reasons.append(f"not stable in group {settings.group_id!r}: member state {state.name}")
    quiet_since = fetcher.last_answer_at or fetcher.started_at
    bound_ms = settings.fetch_max_wait_ms + settings.request_timeout_ms
    if fetchable and quiet_since is not None and (now - quiet_since) * 1000 > bound_ms:
        reasons.append(
            f"no Fetch answered for {now - quiet_since:.1f} s, with {fetchable} partitions to "
            f"fetch (more than fetch_max_wait_ms + request_timeout_ms, {bound_ms} ms)"
        )
    if stopped:
        reasons.append(f"{stopped} partitions stopped by an error, until they are seeked")
    last_poll = parts.metrics.last_poll_at
    if last_poll is not None and (now - last_poll) * 1000 > settings.max_poll_interval_ms:
        reasons.append(
            f"the application has not polled for {now - last_poll:.1f} s "
            f"(max_poll_interval_ms is {settings.max_poll_interval_ms})"
        )
    return reasons
