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


async def test_a_split_batch_is_queued_in_its_place_and_its_deliveries_follow_its_parts() -> None:
    """The parts of a batch refused as too large go where it was, before newer batches; a
    part sent meanwhile and put back goes after the parts of an older split (they share its
    creation time), and each delivery ends with its own part's offset."""
    accumulator = _accumulator()
    appended = [
        accumulator.append("t", 0, b"k%d" % i, b"v" * 50, (), 1_000 + i, 73) for i in range(4)
    ]
    deliveries = [d for d in appended if d is not None]
    [big] = accumulator.remove_all()
    big.attempts = 1  # it was sent
    newer = accumulator.append("t", 0, None, b"n", (), 2_000, 22)
    first, second = accumulator.split_and_reenqueue(big)
    assert (len(first), len(second), accumulator.available) == (2, 2, 1_000 - 4 * 73 - 22)
    ready, _ = accumulator.ready(time.monotonic(), set())
    assert ready == [first]
    accumulator.take(first)
    accumulator.take(second)  # both in flight: the first is refused again, the second waits
    first_a, first_b = accumulator.split_and_reenqueue(first)
    accumulator.put_back(second)
    queued = accumulator.remove_all()
    assert queued[:3] == [first_a, first_b, second]
    assert len(queued) == 4  # and the newer batch last
    assert not big.future.done()
    for part, base in ((first_a, 10), (first_b, 20), (second, 30), (queued[3], 40)):
        part.complete(base, -1)
    await asyncio.sleep(0)
    await asyncio.sleep(0)  # the split of a split ends a turn later
    assert [d.result().offset for d in deliveries] == [10, 20, 30, 31]
    assert [d.result().timestamp for d in deliveries] == [1_000, 1_001, 1_002, 1_003]
    assert newer is not None
    assert newer.result().offset == 40
