"""The accumulator on its own: what a refused record leaves behind (nothing), and how sends
waiting for room in ``buffer_memory`` get it."""

from __future__ import annotations

import asyncio
import time

import pytest

from kafkawire.errors import ClientClosedError
from kafkawire.producer.accumulator import RecordAccumulator
from kafkawire.records import Compression


def _accumulator() -> RecordAccumulator:
    return RecordAccumulator(
        batch_size=16_384,
        linger=0.005,
        buffer_memory=1_000,
        compression=Compression.NONE,
        compression_level=None,
        delivery_timeout=120.0,
    )


async def test_a_record_the_builder_refuses_gives_its_memory_back_and_leaves_no_batch() -> None:
    accumulator = _accumulator()
    with pytest.raises(TypeError, match="timestamp must be an int"):
        accumulator.append("t", 0, None, b"v", (), 1.5, 900)  # type: ignore[arg-type]
    assert accumulator.empty
    assert not accumulator.unfinished
    # All 1,000 bytes are free again: a record of 900 fits, and then one of 200 does not.
    delivery = accumulator.append("t", 0, None, b"v", (), 0, 900)
    assert delivery is not None
    assert delivery.starts_batch
    assert accumulator.append("t", 0, None, b"w", (), 0, 200) is None


async def test_a_refused_record_keeps_the_batch_it_would_have_joined() -> None:
    accumulator = _accumulator()
    assert accumulator.append("t", 0, None, b"v", (), 0, 100) is not None
    with pytest.raises(TypeError, match="value must be bytes-like"):
        accumulator.append("t", 0, None, "text", (), 0, 100)  # type: ignore[arg-type]
    [batch] = accumulator.remove_all()
    assert len(batch) == 1
    assert accumulator.append("t", 0, None, b"v", (), 0, 900) is not None  # 100 in use
    assert accumulator.append("t", 0, None, b"v", (), 0, 1) is None


async def test_sends_waiting_for_room_get_it_in_turn_and_a_cancelled_one_holds_none() -> None:
    accumulator = _accumulator()
    assert accumulator.append("t", 0, None, b"v", (), 0, 900) is not None  # 900 of 1,000 used
    deadline = time.monotonic() + 5
    first = asyncio.create_task(accumulator.reserve(500, deadline))
    second = asyncio.create_task(accumulator.reserve(100, deadline))
    await asyncio.sleep(0)
    assert not first.done()
    assert not second.done()
    # 50 bytes would fit, but the waiting sends came first.
    assert accumulator.append("t", 0, None, b"w", (), 0, 50) is None
    first.cancel()
    await second  # the cancelled one held nothing: the next in line fits now
    [batch] = accumulator.remove_all()
    accumulator.release(batch)  # 100 in use: second's
    assert accumulator.append("t", 1, None, b"x", (), 0, 900) is not None


async def test_close_ends_the_waits_for_room_and_refuses_records() -> None:
    accumulator = _accumulator()
    assert accumulator.append("t", 0, None, b"v", (), 0, 900) is not None
    waiting = asyncio.create_task(accumulator.reserve(500, time.monotonic() + 5))
    await asyncio.sleep(0)
    accumulator.close(ClientClosedError("closed"))
    with pytest.raises(ClientClosedError):
        await waiting
    with pytest.raises(ClientClosedError):
        accumulator.append("t", 0, None, b"v", (), 0, 10)


async def test_the_short_path_does_not_pass_a_send_waiting_for_room() -> None:
    accumulator = _accumulator()
    assert accumulator.append("t", 0, None, b"v", (), 0, 800) is not None  # opens the batch
    assert accumulator.append_to_open("t", 0, None, b"v", 100) is not None
    waiting = asyncio.create_task(accumulator.reserve(500, time.monotonic() + 5))
    await asyncio.sleep(0)
    # 50 bytes would fit, but a send waits for room: it goes first.
    assert accumulator.append_to_open("t", 0, None, b"w", 50) is None
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)  # it holds no room, nor waits
    assert accumulator.append_to_open("t", 0, None, b"w", 50) is not None
    [taken] = accumulator.remove_all()
    assert len(taken) == 3
    assert accumulator.append_to_open("t", 0, None, b"w", 10) is None  # no open batch now
