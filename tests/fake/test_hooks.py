"""Every kind of control hook: answer, pass, cut, drop, delay, edit the handler's answer, keep,
remove, and a hook that fails the test."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from kafkawire.client import KafkaClient
from kafkawire.messages.metadata import v1 as metadata_v1
from kafkawire.messages.metadata import v12 as metadata_v12
from kafkawire.producer import Producer
from kafkawire.testing.fake import CUT, DROP, FakeCluster, FakeClusterError, HookContext

from .wire import Wire

ALL = metadata_v12.MetadataRequest(topics=None)


async def test_a_hook_answers_instead_of_the_handler_once(fake_cluster: FakeCluster) -> None:
    seen: list[tuple[int, int, int]] = []

    def answer(request: Any, ctx: HookContext) -> Any:
        seen.append((ctx.node_id, ctx.api_key, ctx.api_version))
        # Any version of the response will do: it is converted to the request's.
        return metadata_v1.MetadataResponse(controller_id=42)

    fake_cluster.control(answer, api_key="Metadata")
    async with Wire(fake_cluster, node_id=1) as wire:
        first = await wire.send(ALL)
        second = await wire.send(ALL)
    assert first.controller_id == 42
    assert first.brokers == ()
    assert second.controller_id == 0
    assert len(second.brokers) == 3
    assert seen == [(1, 3, 12)]


async def test_a_hook_returning_none_stays_until_it_acts(fake_cluster: FakeCluster) -> None:
    calls = []

    def third_only(request: Any, ctx: HookContext) -> Any:
        calls.append(ctx.api_key)
        if len(calls) < 3:
            return None
        return metadata_v12.MetadataResponse(controller_id=7)

    fake_cluster.control(third_only, api_key=3)
    async with Wire(fake_cluster) as wire:
        answers = [(await wire.send(ALL)).controller_id for _ in range(4)]
    assert answers == [0, 0, 7, 0]
    assert calls == [3, 3, 3]


async def test_kept_hooks_act_on_every_request_until_removed(fake_cluster: FakeCluster) -> None:
    hook = fake_cluster.control(
        lambda request, ctx: metadata_v12.MetadataResponse(controller_id=9), keep=True
    )
    async with Wire(fake_cluster) as wire:
        assert [(await wire.send(ALL)).controller_id for _ in range(2)] == [9, 9]
        hook.remove()
        assert (await wire.send(ALL)).controller_id == 0


async def test_ctx_remove_takes_a_hook_out_whatever_it_returns(fake_cluster: FakeCluster) -> None:
    calls = []

    def look_once(request: Any, ctx: HookContext) -> None:
        calls.append(1)
        ctx.remove()

    fake_cluster.control(look_once, keep=True)
    async with Wire(fake_cluster) as wire:
        await wire.send(ALL)
        await wire.send(ALL)
    assert calls == [1]


async def test_hooks_for_other_apis_do_not_run(fake_cluster: FakeCluster) -> None:
    fake_cluster.control(lambda request, ctx: CUT, api_key="Fetch")
    async with Wire(fake_cluster) as wire:
        assert (await wire.send(ALL)).brokers


async def test_cut_closes_the_connection_and_the_client_recovers(fake_cluster: FakeCluster) -> None:
    fake_cluster.create_topic("t")
    fake_cluster.control(lambda request, ctx: CUT, api_key="Produce")
    async with KafkaClient(fake_cluster.bootstrap) as client:
        assert await client.produce("t", 0, [b"a"]) == 0  # retried on a new connection
    produced = fake_cluster.requests.of("Produce")
    assert len(produced) == 2
    assert produced[0].connection_id != produced[1].connection_id
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"a"]  # the cut one was not written


async def test_drop_never_answers_that_request_nor_the_ones_behind_it(
    fake_cluster: FakeCluster,
) -> None:
    fake_cluster.control(lambda request, ctx: DROP, api_key="Metadata")
    async with Wire(fake_cluster) as wire:
        wire.write(ALL)
        wire.write(ALL)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(wire.read(ALL), 0.1)
        async with Wire(fake_cluster) as other:  # other connections are served
            assert (await other.send(ALL)).brokers


async def test_a_delay_holds_the_answer_then_the_handler_answers(fake_cluster: FakeCluster) -> None:
    released = asyncio.Event()

    async def slow(request: Any, ctx: HookContext) -> None:
        await ctx.sleep(0)
        await released.wait()

    fake_cluster.control(slow, api_key="Metadata")
    async with Wire(fake_cluster) as wire:
        wire.write(ALL)
        reading = asyncio.create_task(wire.read(ALL))
        await fake_cluster.requests.wait_for("Metadata")
        await asyncio.sleep(0.01)
        assert not reading.done()
        released.set()
        assert (await reading).brokers
        assert (await wire.send(ALL)).brokers  # spent: no delay now


async def test_a_hook_can_change_the_handlers_answer(fake_cluster: FakeCluster) -> None:
    """The handler runs once (the batch is written), the producer hears NOT_LEADER_OR_FOLLOWER
    and sends it again: a duplicate, which the idempotent log answers with the first offset."""
    fake_cluster.create_topic("t")
    answers = []

    async def lose_the_answer(request: Any, ctx: HookContext) -> Any:
        response = await ctx.handle()
        topic = response.responses[0]
        answers.append(topic.partition_responses[0])
        failed = dataclasses.replace(topic.partition_responses[0], error_code=6, base_offset=-1)
        return dataclasses.replace(
            response, responses=(dataclasses.replace(topic, partition_responses=(failed,)),)
        )

    fake_cluster.control(lose_the_answer, api_key="Produce")
    async with Producer(fake_cluster.bootstrap, retry_backoff_ms=1) as producer:
        metadata = await producer.send_and_wait("t", b"x", partition=0)
    assert metadata.offset == 0
    assert [(a.error_code, a.base_offset) for a in answers] == [(0, 0)]
    assert len(fake_cluster.requests.of("Produce")) == 2
    assert [r.value for r in fake_cluster.records("t", 0)] == [b"x"]


async def test_a_failing_hook_cuts_and_fails_the_test_at_close() -> None:
    def broken(request: Any, ctx: HookContext) -> Any:
        raise RuntimeError("the hook's own bug")

    async def run() -> None:
        async with FakeCluster(1) as cluster:
            cluster.control(broken)
            async with Wire(cluster) as wire:
                wire.write(ALL)
                assert await wire.closed()

    with pytest.raises(FakeClusterError, match="the hook's own bug"):
        await run()
