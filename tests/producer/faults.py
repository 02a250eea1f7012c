"""The producer's faults, as control hooks on the fake cluster (:mod:`kafkawire.testing.fake`):
answers a broker gives that the fake would not (a Produce refused with an error code, an
InitProducerId or TxnOffsetCommit refused, a topic refused in Metadata), delays, and a
Produce answered without keeping the records (for memory measurements).

Each function returns a hook for ``fake_cluster.control(hook, api_key=..., keep=...)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from kafkawire.records import RecordBatch, decode_batches
from kafkawire.testing.fake import HookContext
from kafkawire.testing.fake.build import build, part, response_class

Hook = Callable[[Any, HookContext], Any]

PRODUCE, METADATA, INIT_PRODUCER_ID, TXN_OFFSET_COMMIT = 0, 3, 22, 28


def _per_partition(
    ctx: HookContext,
    api_key: int,
    fields: tuple[str, str],
    topics: Iterable[tuple[dict[str, Any], Iterable[dict[str, Any]]]],
) -> Any:
    """A response of ``api_key`` at the request's version, with a struct per topic (in its
    field ``fields[0]``) and per partition (``fields[1]``): ``topics`` gives each topic's
    values and its partitions' values."""
    cls = response_class(api_key, ctx.api_version)
    topic_cls = part(cls, fields[0])
    partition_cls = part(topic_cls, fields[1])
    return build(
        cls,
        **{
            fields[0]: tuple(
                build(
                    topic_cls,
                    **values,
                    **{fields[1]: tuple(build(partition_cls, **p) for p in partitions)},
                )
                for values, partitions in topics
            )
        },
    )


def produce_answer(request: Any, ctx: HookContext, code: int, base_offset: int = -1) -> Any:
    """The Produce answer giving every partition of ``request`` ``code`` (and
    ``base_offset``), at the request's version."""
    return _per_partition(
        ctx,
        PRODUCE,
        ("responses", "partition_responses"),
        (
            (
                {"name": getattr(t, "name", ""), "topic_id": getattr(t, "topic_id", None)},
                (
                    {"index": p.index, "error_code": code, "base_offset": base_offset}
                    for p in t.partition_data
                ),
            )
            for t in request.topic_data
        ),
    )


def refuse_produce(code: int, when: Callable[[Any], bool] = lambda request: True) -> Hook:
    """Refuse every partition of a Produce request with ``code`` (those ``when`` picks)."""

    def refuse(request: Any, ctx: HookContext) -> Any:
        return produce_answer(request, ctx, code) if when(request) else None

    return refuse


def refuse_partition(partition: int, code: int) -> Hook:
    """Answer ``partition`` of every Produce with ``code``; the fake takes the others (it
    appends the refused partition's records too, which nothing reads back)."""

    async def refuse(request: Any, ctx: HookContext) -> Any:
        answer = await ctx.handle()
        return dataclasses.replace(
            answer,
            responses=tuple(
                dataclasses.replace(
                    topic,
                    partition_responses=tuple(
                        dataclasses.replace(p, error_code=code, base_offset=-1)
                        if p.index == partition
                        else p
                        for p in topic.partition_responses
                    ),
                )
                for topic in answer.responses
            ),
        )

    return refuse


def producer_ids(request: Any) -> set[int]:
    """The producer ids of the batches a Produce request carries."""
    return {
        batch.producer_id
        for topic in request.topic_data
        for p in topic.partition_data
        for batch in decode_batches(p.records)
        if isinstance(batch, RecordBatch)
    }


def accept_and_forget(request: Any, ctx: HookContext) -> Any:
    """Answer every Produce with success at offset 0, keeping nothing of it."""
    return produce_answer(request, ctx, 0, base_offset=0)


def delay(seconds: float) -> Hook:
    """Hold each request ``seconds`` before the fake answers it (its connection waits too)."""

    async def hold(request: Any, ctx: HookContext) -> None:
        await ctx.sleep(seconds)

    return hold


def init_producer_id_answer(ctx: HookContext, code: int, producer_id: int = -1) -> Any:
    """An InitProducerId answer: ``code``, or with ``code`` 0 the id ``producer_id``."""
    cls = response_class(INIT_PRODUCER_ID, ctx.api_version)
    return build(
        cls, error_code=code, producer_id=producer_id, producer_epoch=0 if code == 0 else -1
    )


def refuse_topic(name: str, code: int) -> Hook:
    """Metadata answers ``name`` with ``code`` and no partitions (as a broker that refuses it:
    not authorized, invalid)."""

    async def refuse(request: Any, ctx: HookContext) -> Any:
        if request.topics is None or name not in {t.name for t in request.topics}:
            return None
        answer = await ctx.handle()
        refused = part(type(answer), "topics")
        topics = tuple(t for t in answer.topics if t.name != name)
        topics += (build(refused, name=name, error_code=code, partitions=()),)
        return dataclasses.replace(answer, topics=topics)

    return refuse
