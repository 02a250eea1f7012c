"""The moves of an in-flight record's state, walked without a broker: every move of the table
is allowed, every other raises, and the rules that ride on them hold."""

from __future__ import annotations

import itertools

import pytest

from kafkawire.testing.fake import RecordState
from kafkawire.testing.fake.share.records import (
    TRANSITIONS,
    IllegalRecordTransitionError,
    InFlight,
)


@pytest.mark.parametrize(("start", "target"), list(itertools.product(RecordState, RecordState)))
def test_only_the_tables_moves_are_allowed(start: RecordState, target: RecordState) -> None:
    record = InFlight(state=start)
    if (start, target) in TRANSITIONS:
        record.move(target)
        assert record.state is target
    else:
        with pytest.raises(IllegalRecordTransitionError, match=f"{start.name} -> {target.name}"):
            record.move(target)


def test_acquiring_counts_a_delivery_and_giving_back_keeps_it() -> None:
    record = InFlight()
    record.acquire("m", lock=7)
    assert (record.state, record.delivery_count, record.member_id, record.lock) == (
        RecordState.ACQUIRED,
        1,
        "m",
        7,
    )
    record.give_back(limit=5, below_start=False)
    assert (record.state, record.delivery_count, record.member_id, record.lock) == (
        RecordState.AVAILABLE,
        1,
        "",
        0,
    )


def test_giving_back_at_the_limit_or_below_the_start_archives() -> None:
    at_limit = InFlight()
    at_limit.acquire("m", lock=1)
    at_limit.give_back(limit=1, below_start=False)
    below = InFlight()
    below.acquire("m", lock=1)
    below.give_back(limit=5, below_start=True)
    assert (at_limit.state, below.state) == (RecordState.ARCHIVED, RecordState.ARCHIVED)
