"""The accumulator on its own: what a refused record leaves behind (nothing)."""

from __future__ import annotations

import pytest

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
