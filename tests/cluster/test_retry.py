"""The retry loop (``kafkawire.cluster._retry``) alone, with scripted attempts: what a call that
runs out of time raises, whichever way its time runs out."""

from __future__ import annotations

import asyncio
import time

import pytest

from kafkawire.cluster import Backoff, CallTimeoutError
from kafkawire.cluster._deadline import Deadlines
from kafkawire.cluster._retry import Retries
from kafkawire.errors import InvalidTopicError, UnknownTopicOrPartitionError
from kafkawire.net.errors import RequestTimeoutError

FAST = Backoff(initial=0.001, maximum=0.002)
WAIT = 5.0  # a bound on each test, never reached when it passes


def retries() -> Retries:
    deadlines = Deadlines(call_timeout=60, request_timeout=30, closed=lambda: False)
    return Retries(FAST, deadlines, lambda: False)


class Script:
    """An attempt that raises ``errors`` in turn, then waits for ever (``hang``) or raises the
    last again."""

    def __init__(self, *errors: Exception, hang: bool = False) -> None:
        self.errors = list(errors)
        self.hang = hang
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors and (len(self.errors) > 1 or not self.hang):
            raise self.errors.pop(0) if len(self.errors) > 1 else self.errors[0]
        await asyncio.Event().wait()
        raise AssertionError("never")


def unknown(n: int = 1) -> UnknownTopicOrPartitionError:
    return UnknownTopicOrPartitionError(f"metadata for topic 'nope' ({n})")


async def test_errors_until_the_deadline_end_in_one_timeout_naming_the_last() -> None:
    """The backoff runs out before the scope does: the last error was raised before."""
    attempt = Script(unknown(1), unknown(2))
    deadline = time.monotonic() + 0.05
    with pytest.raises(CallTimeoutError) as caught:
        await asyncio.wait_for(retries().call("ListOffsets", attempt, deadline=deadline), WAIT)
    error = caught.value
    assert isinstance(error, RequestTimeoutError)
    assert error.retriable
    assert str(error).startswith("ListOffsets: not done within 0.05 s")
    last = "last error: UNKNOWN_TOPIC_OR_PARTITION (3): metadata for topic 'nope' (2)"
    assert str(error).endswith(last)
    assert isinstance(error.__cause__, UnknownTopicOrPartitionError)
    assert attempt.calls >= 2


async def test_an_attempt_cut_by_the_deadline_names_the_error_before_it() -> None:
    """The scope runs out during an attempt: before, a bare RequestTimeoutError."""
    attempt = Script(unknown(1), unknown(2), hang=True)
    deadline = time.monotonic() + 0.2
    with pytest.raises(CallTimeoutError) as caught:
        await asyncio.wait_for(retries().call("ListOffsets", attempt, deadline=deadline), WAIT)
    error = caught.value
    assert str(error).startswith("ListOffsets: not done within 0.2 s")
    last = "last error: UNKNOWN_TOPIC_OR_PARTITION (3): metadata for topic 'nope' (1)"
    assert str(error).endswith(last)
    assert isinstance(error.__cause__, UnknownTopicOrPartitionError)
    assert attempt.calls == 2


async def test_a_first_attempt_never_answered_is_a_timeout_without_a_last_error() -> None:
    deadline = time.monotonic() + 0.05
    with pytest.raises(CallTimeoutError) as caught:
        await asyncio.wait_for(
            retries().call("Metadata", Script(hang=True), deadline=deadline), WAIT
        )
    assert str(caught.value) == "Metadata: no answer within 0.05 s"
    assert caught.value.__cause__ is None


async def test_a_request_timing_out_at_the_deadline_is_the_last_error() -> None:
    attempt = Script(RequestTimeoutError("broker 1: no answer to ListOffsets within 0.01 s"))
    deadline = time.monotonic() + 0.05
    with pytest.raises(CallTimeoutError) as caught:
        await asyncio.wait_for(retries().call("ListOffsets", attempt, deadline=deadline), WAIT)
    assert type(caught.value.__cause__) is RequestTimeoutError
    assert "last error: broker 1: no answer to ListOffsets" in str(caught.value)


async def test_without_retries_the_first_retriable_error_is_raised_as_it_is() -> None:
    error = unknown()
    with pytest.raises(UnknownTopicOrPartitionError) as caught:
        await retries().call("X", Script(error), deadline=time.monotonic() + 1, retry=False)
    assert caught.value is error


async def test_an_error_not_retriable_is_raised_as_it_is() -> None:
    error = InvalidTopicError("bad name")
    with pytest.raises(InvalidTopicError) as caught:
        await retries().call("X", Script(error), deadline=time.monotonic() + 1)
    assert caught.value is error


async def test_a_timeout_of_an_inner_call_is_not_renamed_by_the_outer_one() -> None:
    """A call inside a call: the inner one's timeout is the outer's last error, once."""
    loop = retries()

    async def inner() -> str:
        return await loop.call("Metadata", Script(unknown(1)), deadline=time.monotonic() + 0.02)

    with pytest.raises(CallTimeoutError) as caught:
        await asyncio.wait_for(
            loop.call("ListOffsets", inner, deadline=time.monotonic() + 0.1), WAIT
        )
    assert str(caught.value).startswith("ListOffsets: not done within 0.1 s")
    assert "last error: Metadata: not done within" in str(caught.value)
    assert isinstance(caught.value.__cause__, CallTimeoutError)
