"""The one way background errors reach the application, without a broker: which call raises
which error, in what order, and how often."""

from __future__ import annotations

import pytest

from kafkawire.consumer import BackgroundTaskError
from kafkawire.consumer.inbox import Inbox
from kafkawire.consumer.tasks import BackgroundTasks
from kafkawire.errors import FencedInstanceIdError, TopicAuthorizationFailedError


async def test_each_kind_of_error_is_raised_by_the_calls_it_is_for() -> None:
    tasks = BackgroundTasks(restart_delay=0)
    inbox = Inbox(tasks)
    assert not any(s.is_set() for s in inbox.signals)
    inbox.raise_for_poll()  # nothing waits: nothing raised

    async def broken() -> None:
        raise OverflowError("a bug")

    await tasks.spawn("fetcher", broken)
    fetch_error = TopicAuthorizationFailedError("t/0")
    inbox.put(fetch_error)
    fatal = FencedInstanceIdError("fenced")
    inbox.end(fatal)
    assert all(s.is_set() for s in inbox.signals)  # a waiting call wakes

    with pytest.raises(BackgroundTaskError, match="fetcher"):  # any call, once
        inbox.raise_failures()
    for _ in range(2):  # any call, every time
        with pytest.raises(FencedInstanceIdError):
            inbox.raise_failures()
        with pytest.raises(FencedInstanceIdError):
            inbox.raise_for_poll()  # before what waits for a poll, which never comes now


async def test_errors_for_the_poll_are_raised_by_polls_in_order_once() -> None:
    inbox = Inbox(BackgroundTasks(restart_delay=0))
    first, second = TopicAuthorizationFailedError("t/0"), TopicAuthorizationFailedError("t/1")
    inbox.put(first)
    inbox.put(second)
    inbox.raise_failures()  # not for a commit, say: a fetch error is the poll's
    for error in (first, second):
        with pytest.raises(TopicAuthorizationFailedError) as caught:
            inbox.raise_for_poll()
        assert caught.value is error
    inbox.raise_for_poll()
    assert not any(s.is_set() for s in inbox.signals)
