"""Ready-made hooks for fault tests: answers a broker gives that the fake would not on its own.

Each function returns a hook for ``cluster.control(hook, api_key=..., keep=...)``
(:mod:`.hooks`)::

    cluster.control(answer_partitions(6), api_key="Fetch")  # NOT_LEADER_OR_FOLLOWER, once
    cluster.control(refuse_partition(1, 87), api_key="Produce", keep=True)
    cluster.control(hold(released), api_key="ListOffsets")  # answered once the test sets it

- :func:`answer_partitions`: every partition the request names answered with an error code
  (and other values), without the handler: nothing is written or read. For the APIs whose
  requests name partitions by topic: Produce, Fetch, ListOffsets, OffsetCommit and
  TxnOffsetCommit.
- :func:`refuse_partition`: the handler answers, then one partition's answer is replaced by an
  error (the handler's effects stay: a refused Produce partition is still appended).
- :func:`refuse_topic`: Metadata answers a topic with an error and no partitions;
  :func:`leave_out_topic`: Metadata answers without the topic at all.
- :func:`metadata_brokers`: Metadata names other brokers (besides the cluster's, or instead):
  addresses a client cannot use, brokers that are not there.
- :func:`delay` and :func:`hold`: the handler answers late, after some seconds or once an
  awaitable (an event the test sets) is done.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .build import build, has, part, response_class
from .hooks import HookContext, HookFunction

__all__ = [
    "answer_partitions",
    "delay",
    "hold",
    "leave_out_topic",
    "metadata_brokers",
    "partition_answer",
    "refuse_partition",
    "refuse_topic",
]


@dataclasses.dataclass(frozen=True)
class _Shape:
    """Where a request and its response keep topics, their partitions and partition indexes;
    and what Kafka answers a refused partition besides its error code."""

    request: tuple[str, str, str]
    response: tuple[str, str, str]
    refused: dict[str, int] = dataclasses.field(default_factory=dict)


_TOPIC_NAMES = ("name", "topic", "topic_id")  # how a topic is named, by API and version
_BY_INDEX = ("topics", "partitions", "partition_index")
_SHAPES = {
    0: _Shape(
        ("topic_data", "partition_data", "index"),
        ("responses", "partition_responses", "index"),
        {"base_offset": -1},
    ),
    1: _Shape(
        ("topics", "partitions", "partition"),
        ("responses", "partitions", "partition_index"),
        {"high_watermark": -1, "last_stable_offset": -1, "log_start_offset": -1},
    ),
    2: _Shape(_BY_INDEX, _BY_INDEX, {"offset": -1, "timestamp": -1}),
    8: _Shape(_BY_INDEX, _BY_INDEX),
    28: _Shape(_BY_INDEX, _BY_INDEX),
}


def _shape(api_key: int) -> _Shape:
    try:
        return _SHAPES[api_key]
    except KeyError:
        raise ValueError(
            f"answer_partitions: API key {api_key} is not one whose partitions it answers "
            f"(keys {sorted(_SHAPES)})"
        ) from None


def partition_answer(request: Any, ctx: HookContext, error_code: int, **fields: Any) -> Any:
    """The answer to ``request`` (at its version) naming every partition it asks about, each
    with ``error_code`` and ``fields``; the offsets Kafka answers a refused partition with
    (-1: a Produce's base offset, a Fetch's high watermark, ...) unless ``fields`` says."""
    shape = _shape(ctx.api_key)
    topics, partitions, index = shape.request
    answer_topics, answer_partitions_field, answer_index = shape.response
    values = shape.refused | fields
    cls = response_class(ctx.api_key, ctx.api_version)
    topic_cls = part(cls, answer_topics)
    partition_cls = part(topic_cls, answer_partitions_field)
    return build(
        cls,
        **{
            answer_topics: tuple(
                build(
                    topic_cls,
                    **{name: getattr(topic, name) for name in _TOPIC_NAMES if hasattr(topic, name)},
                    **{
                        answer_partitions_field: tuple(
                            build(
                                partition_cls,
                                **{answer_index: getattr(p, index)},
                                error_code=error_code,
                                **values,
                            )
                            for p in getattr(topic, partitions)
                        )
                    },
                )
                for topic in getattr(request, topics)
            )
        },
    )


def answer_partitions(
    error_code: int, *, when: Callable[[Any], bool] | None = None, **fields: Any
) -> HookFunction:
    """Answer every partition of a request with ``error_code`` and ``fields``, without the
    handler (only the requests ``when`` accepts, if given; the others go on to the handler)."""

    def answer(request: Any, ctx: HookContext) -> Any:
        if when is not None and not when(request):
            return None
        return partition_answer(request, ctx, error_code, **fields)

    return answer


def refuse_partition(partition: int, error_code: int, **fields: Any) -> HookFunction:
    """The handler's answer with partition ``partition`` (of every topic) given
    ``error_code`` and ``fields`` instead (and the offsets Kafka answers a refused partition
    with, as :func:`partition_answer`)."""

    async def refuse(request: Any, ctx: HookContext) -> Any:
        answer = await ctx.handle()
        shape = _shape(ctx.api_key)
        topics, partitions, index = shape.response
        values = shape.refused | fields
        return dataclasses.replace(
            answer,
            **{
                topics: tuple(
                    dataclasses.replace(
                        topic,
                        **{
                            partitions: tuple(
                                _replaced(p, error_code=error_code, **values)
                                if getattr(p, index) == partition
                                else p
                                for p in getattr(topic, partitions)
                            )
                        },
                    )
                    for topic in getattr(answer, topics)
                )
            },
        )

    return refuse


def _replaced(struct: Any, **values: Any) -> Any:
    """``struct`` with ``values`` of the fields its version has."""
    return dataclasses.replace(struct, **{k: v for k, v in values.items() if has(type(struct), k)})


def refuse_topic(name: str, error_code: int) -> HookFunction:
    """Metadata answers the topic ``name`` with ``error_code`` and no partitions (a broker
    that refuses it: not authorized, invalid), the other topics as the handler does."""

    async def refuse(request: Any, ctx: HookContext) -> Any:
        if request.topics is None or name not in {t.name for t in request.topics}:
            return None
        answer = await ctx.handle()
        refused = part(type(answer), "topics")
        topics = tuple(t for t in answer.topics if t.name != name)
        topics += (build(refused, name=name, error_code=error_code, partitions=()),)
        return dataclasses.replace(answer, topics=topics)

    return refuse


def leave_out_topic(name: str) -> HookFunction:
    """Metadata answers without the topic ``name``, even where it was asked for by name (Kafka
    names every topic asked for, with an error if need be; a broker that leaves one out gives
    the client no error to read), the other topics as the handler does."""

    async def leave_out(request: Any, ctx: HookContext) -> Any:
        answer = await ctx.handle()
        return dataclasses.replace(answer, topics=tuple(t for t in answer.topics if t.name != name))

    return leave_out


def metadata_brokers(
    brokers: Iterable[tuple[int, str, int]], *, only: bool = False
) -> HookFunction:
    """Metadata names ``brokers`` (node id, host, port) besides the running brokers of the
    cluster, or, with ``only``, instead of them (the partitions keep their leaders, which may
    then be at one of these addresses or nowhere): a port out of range, a host no resolver
    takes, a broker the client cannot reach. A node id of the cluster's given here replaces
    that broker's address."""
    named = tuple(brokers)

    async def name(request: Any, ctx: HookContext) -> Any:
        answer = await ctx.handle()
        broker_cls = part(type(answer), "brokers")
        given = {node for node, _, _ in named}
        kept = () if only else tuple(b for b in answer.brokers if b.node_id not in given)
        added = tuple(build(broker_cls, node_id=n, host=h, port=p) for n, h, p in named)
        return dataclasses.replace(answer, brokers=kept + added)

    return name


def delay(seconds: float) -> HookFunction:
    """Hold each request ``seconds`` before the handler answers it (its connection waits
    too)."""

    async def wait(request: Any, ctx: HookContext) -> None:
        await ctx.sleep(seconds)

    return wait


def hold(until: Awaitable[Any] | Callable[[], Awaitable[Any]]) -> HookFunction:
    """Hold requests until ``until`` is done, then let the handler answer: an awaitable, or a
    function making one per request (``released.wait`` of an ``asyncio.Event``)."""

    async def wait(request: Any, ctx: HookContext) -> None:
        await ctx.hold(until() if callable(until) else until)

    return wait
