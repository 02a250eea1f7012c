"""Requests that name partitions, each answered by its partition's leader: split by leader,
sent to every leader at once, merged, and asked again where a leader moved.

ListOffsets, DeleteRecords, OffsetForLeaderEpoch and a one-shot Fetch go to the leader of
each partition they name, and the cluster refuses to route one request to several leaders
(``RoutingError``). :func:`fan_out` is the one place that splits them, as franz-go's
``sharder`` is for its client and its admin package:

- ``build(leader, share)`` makes the request for one leader's partitions, and ``read(response,
  share)`` gives each partition's answer or error; every leader's request goes at once (at
  the highest version both sides know, unless ``build`` chose one), without the cluster's
  own retries.
- Each partition ends with its answer or an error: its own error code, the error of its
  leader's request (a lost connection, a timeout), the reason it could not be routed (an
  unknown topic, no such partition, no leader), or a :class:`ProtocolError` when the answer
  left it out. One partition's error never hides another's answer.
- Partitions whose error is retriable, and that ``retry`` accepts, are asked again after a
  metadata refresh and a backoff, until the call's deadline; the others keep their results.
  So a leader that moved mid-call (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH) costs its own
  partitions one more round. The rounds run inside :meth:`Cluster.call`, which owns the
  deadline, the backoff, the warning on the first retry, and the rule that a broker closing
  the connection in answer twice refuses the request (``RequestRefusedError``).
- A closed client raises :class:`ClientClosedError`: that is no partition's result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kafkawire.cluster import Cluster, ClusterMetadata, TopicPartition
from kafkawire.errors import (
    ClientClosedError,
    ConnectionClosedError,
    KafkawireError,
    ProtocolError,
    UnknownTopicOrPartitionError,
)
from kafkawire.messages import RequestMessage

__all__ = [
    "LeaderSplit",
    "RetryPolicy",
    "by_leader",
    "by_topic",
    "current_leader_epoch",
    "fan_out",
    "per_topic",
    "retriable",
    "retriable_for_known_topics",
    "unanswered",
]

T = TypeVar("T")
V = TypeVar("V")
A = TypeVar("A")
P = TypeVar("P")

RetryPolicy = Callable[[KafkawireError], bool]
"""Which retriable errors of a partition are worth another round (``None``: none are)."""


def retriable(error: KafkawireError) -> bool:
    """Every retriable error: a topic not known yet is waited for, as consumers wait for it."""
    return error.retriable


def retriable_for_known_topics(error: KafkawireError) -> bool:
    """Every retriable error but an unknown topic or partition, which is answered at once (an
    admin call reports it rather than wait for a topic that may never come)."""
    return error.retriable and not isinstance(error, UnknownTopicOrPartitionError)


@dataclass(frozen=True, slots=True)
class LeaderSplit(Generic[T]):
    """Items grouped by the leader of their partition, and those without one, with why."""

    shares: dict[int, list[T]] = field(default_factory=dict)
    unrouted: list[tuple[T, KafkawireError]] = field(default_factory=list)


def by_leader(
    metadata: ClusterMetadata, items: Iterable[T], partition_of: Callable[[T], TopicPartition]
) -> LeaderSplit[T]:
    """``items`` grouped by the leader ``metadata`` names for ``partition_of(item)``, in their
    order; an item whose partition has no leader (an unknown topic, a partition the topic
    lacks, an election under way) is unrouted, with that error."""
    split: LeaderSplit[T] = LeaderSplit()
    for item in items:
        tp = partition_of(item)
        try:
            leader = metadata.leader_for(tp.topic, tp.partition)
        except KafkawireError as error:
            split.unrouted.append((item, error))
        else:
            split.shares.setdefault(leader, []).append(item)
    return split


def by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """Partition indexes grouped by topic, in their order, as requests list them."""
    grouped: dict[str, list[int]] = {}
    for tp in partitions:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return grouped


def current_leader_epoch(cluster: Cluster, tp: TopicPartition) -> int:
    """The leader epoch the metadata last read gives ``tp`` (-1: unknown), which a request
    to its leader carries so that a broker that is not that leader fences it
    (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) instead of answering from a stale log."""
    metadata = cluster.current_metadata
    return metadata.leader_epoch(tp.topic, tp.partition) if metadata is not None else -1


def per_topic(
    partitions: Mapping[TopicPartition, V],
    topic: Callable[[str, tuple[P, ...]], T],
    partition: Callable[[TopicPartition, V], P],
) -> tuple[T, ...]:
    """A request's array of topics for ``partitions`` (partition -> what to ask of it): one
    ``topic(name, its partitions)`` per topic, in their order, each partition made by
    ``partition(tp, value)``."""
    grouped: dict[str, list[P]] = {}
    for tp, value in partitions.items():
        grouped.setdefault(tp.topic, []).append(partition(tp, value))
    return tuple(topic(name, tuple(parts)) for name, parts in grouped.items())


def unanswered(what: object, response: Any) -> ProtocolError:
    """The error for an item the broker's response left out."""
    return ProtocolError(
        f"the broker's {type(response).__name__} v{response.__version__} does not answer for {what}"
    )


def _left_out(
    tp: TopicPartition, response: Any, answers: Iterable[TopicPartition]
) -> ProtocolError:
    """The broker breaking the protocol: its answer leaves out ``tp``, which it was asked."""
    came = ", ".join(f"{t}/{p}" for t, p in answers) or "no partitions"
    return ProtocolError(
        f"the {type(response).__name__} v{response.__version__} does not answer "
        f"{tp.topic}/{tp.partition}: it names {came}"
    )


def _itself(tp: TopicPartition) -> TopicPartition:
    return tp


async def fan_out(
    cluster: Cluster,
    wanted: Mapping[TopicPartition, V],
    build: Callable[[int, dict[TopicPartition, V]], Awaitable[RequestMessage[Any]]],
    read: Callable[[Any, dict[TopicPartition, V]], Mapping[TopicPartition, A | KafkawireError]],
    *,
    what: str,
    retry: RetryPolicy | None = retriable,
    negotiate: bool = True,
) -> dict[TopicPartition, A | KafkawireError]:
    """Each partition of ``wanted`` (partition -> what to ask of it) answered by its leader:
    ``build(leader, share)`` is the request for one leader's share, ``read(response, share)``
    each partition's answer or error. Requests go at the highest version both sides know
    (``negotiate``), or at the version ``build`` chose. See the module's docstring for the
    rules."""
    if not wanted:
        return {}
    results: dict[TopicPartition, A | KafkawireError] = {}
    pending = {TopicPartition(*tp): value for tp, value in wanted.items()}

    def again(outcome: object) -> bool:
        return (
            isinstance(outcome, KafkawireError)
            and outcome.retriable
            and retry is not None
            and retry(outcome)
        )

    async def ask(leader: int, share: dict[TopicPartition, V]) -> dict[TopicPartition, Any]:
        request = await build(leader, share)
        response = await cluster.send(request, node_id=leader, negotiate=negotiate, retry=False)
        answers = read(response, share)
        return {
            tp: answers[tp] if tp in answers else _left_out(tp, response, answers) for tp in share
        }

    async def attempt() -> None:
        nonlocal pending
        metadata = await cluster.metadata({tp.topic for tp in pending})
        split = by_leader(metadata, pending, _itself)
        outcomes: dict[TopicPartition, Any] = dict(split.unrouted)
        shares = [{tp: pending[tp] for tp in tps} for tps in split.shares.values()]
        answers = await asyncio.gather(
            *(ask(leader, share) for leader, share in zip(split.shares, shares, strict=True)),
            return_exceptions=True,  # one leader's failure is its partitions' failure
        )
        for share, answer in zip(shares, answers, strict=True):
            if isinstance(answer, ClientClosedError) or not isinstance(
                answer, dict | KafkawireError
            ):
                raise answer
            outcomes.update(
                dict.fromkeys(share, answer) if isinstance(answer, Exception) else answer
            )
        results.update(outcomes)
        pending = {tp: pending[tp] for tp, outcome in outcomes.items() if again(outcome)}
        if pending:
            errors = [results[tp] for tp in pending]
            # A lost connection first: the cluster counts a broker's refusals by it.
            first = next((e for e in errors if isinstance(e, ConnectionClosedError)), errors[0])
            assert isinstance(first, KafkawireError)
            raise first

    try:
        await cluster.call(
            what, attempt, retry=retry is not None, forget=lambda _: cluster.mark_metadata_stale()
        )
    except ClientClosedError:
        raise
    except KafkawireError as exc:
        # Time ran out (the error a retry needs time for): each partition still pending keeps
        # its own last error, where it has one. What else ended the call (a refusal, a failed
        # metadata lookup) is the error of each.
        for tp in pending:
            if not (exc.retriable and tp in results):
                results[tp] = exc
    return {tp: results[tp] for tp in map(_as_tp, wanted)}


def _as_tp(tp: tuple[str, int]) -> TopicPartition:
    return TopicPartition(*tp)
