"""On the cluster's real clock (time.monotonic) the coordinator's timers wake themselves:
nothing needs a hand-driven clock."""

from __future__ import annotations

import asyncio
import time

from kafkawire.messages.consumer_group_describe import v1 as cgd
from kafkawire.testing.fake.config import FakeConfig
from kafkawire.testing.fake.groups import GroupCoordinator

from .harness import Shares, View, consumer_heartbeat, join


class _RealClock:
    def now(self) -> float:
        return time.monotonic()


async def test_a_session_expires_without_anyone_advancing_time() -> None:
    view = View(_RealClock(), {"t": 1})
    coordinator = GroupCoordinator(view, FakeConfig(consumer_group_session_timeout_ms=20), Shares())
    try:
        joined = await coordinator.handle(consumer_heartbeat("m", 0, topics=["t"]), 0)
        assert joined.member_epoch == 1

        async def members() -> int:
            request = cgd.ConsumerGroupDescribeRequest(group_ids=("g",))
            return len((await coordinator.handle(request, 0)).groups[0].members)

        async def expired() -> None:
            while await members():
                await asyncio.sleep(0.01)

        await asyncio.wait_for(expired(), timeout=5)
    finally:
        coordinator.close()


async def test_a_new_group_is_formed_after_a_zero_initial_delay_at_once() -> None:
    coordinator = GroupCoordinator(View(_RealClock(), {"t": 1}), FakeConfig(), Shares())
    try:
        answer = await asyncio.wait_for(coordinator.handle(join(version=3), 0), timeout=5)
        assert (answer.error_code, answer.generation_id) == (0, 1)
    finally:
        coordinator.close()
