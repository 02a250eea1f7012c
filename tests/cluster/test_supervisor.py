"""The one owner of a client's background tasks: it names them, restarts lasting ones, reports
an error no task handles once (to the inbox and the owner's callback), ends quietly on a
closing client, and cancels and waits for every task on close without raising."""

from __future__ import annotations

import asyncio
import logging

import pytest

from kafkawire.cluster.supervisor import Supervisor, is_transient
from kafkawire.errors import (
    ClientClosedError,
    KafkawireError,
    NotLeaderOrFollowerError,
    UnknownTopicOrPartitionError,
)

WAIT = 10  # the bound on every wait: a test must fail, not hang
_log = logging.getLogger("kafkawire.tests.owner")


class Wrapped(KafkawireError):
    def __init__(self, task: str, error: BaseException) -> None:
        super().__init__(f"{task}: {error}")


def supervisor(**options: object) -> Supervisor:
    return Supervisor("client c-1", log=_log, **options)  # type: ignore[arg-type]


async def ended(task: asyncio.Task[None]) -> None:
    """Until ``task`` is done: it ends without an error (its owner hears of one, not a
    waiter)."""
    await asyncio.wait_for(task, WAIT)


def failing(times: int, error: Exception, ran: list[int]) -> object:
    async def work() -> None:
        ran.append(1)
        if len(ran) <= times:
            raise error

    return work


async def test_a_task_is_named_after_its_client_and_ends_when_its_work_does() -> None:
    tasks = supervisor()
    ran: list[int] = []
    task = tasks.spawn("fetcher", failing(0, RuntimeError(), ran))  # type: ignore[arg-type]
    assert task.get_name() == "kafkawire client c-1: fetcher"
    await asyncio.wait_for(task, WAIT)
    assert ran == [1]
    assert tasks.failure is None


async def test_an_unexpected_error_is_logged_once_and_waits_in_the_inbox_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    told: list[BaseException] = []
    tasks = supervisor(wrap=Wrapped, on_failure=told.append)
    error = OverflowError("too big")
    await ended(tasks.spawn("commit", failing(1, error, [])))  # type: ignore[arg-type]
    assert tasks.failed.is_set()
    assert told == [tasks.failure]
    with pytest.raises(Wrapped, match="commit: too big") as caught:
        tasks.raise_failure()
    assert caught.value.__cause__ is error
    assert not tasks.failed.is_set()
    tasks.raise_failure()  # once: the inbox is empty now
    (logged,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert logged.name == _log.name
    assert logged.exc_info is not None
    assert "client c-1: commit stopped" in logged.getMessage()


async def test_while_a_failure_waits_later_ones_are_only_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    told: list[BaseException] = []
    tasks = supervisor(on_failure=told.append)
    first, second = RuntimeError("first"), RuntimeError("second")
    await ended(tasks.spawn("a", failing(1, first, [])))  # type: ignore[arg-type]
    await ended(tasks.spawn("b", failing(1, second, [])))  # type: ignore[arg-type]
    assert told == [first]
    assert tasks.failure is first  # no wrap: the error itself, with no cause added
    assert first.__cause__ is None
    assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 2


async def test_a_lasting_task_runs_again_after_an_unexpected_error() -> None:
    tasks = supervisor(restart_delay=0.001)
    ran: list[int] = []
    task = tasks.spawn("membership", failing(2, ValueError("bug"), ran), lasting=True)  # type: ignore[arg-type]
    await asyncio.wait_for(task, WAIT)
    assert ran == [1, 1, 1]  # failed twice, then its work ended
    assert isinstance(tasks.failure, ValueError)  # reported once, while it waited


async def test_a_closing_client_ends_a_task_quietly() -> None:
    told: list[BaseException] = []
    tasks = supervisor(on_failure=told.append)
    ran: list[int] = []
    work = failing(1, ClientClosedError("closed"), ran)
    await ended(tasks.spawn("fetch", work, lasting=True))  # type: ignore[arg-type]
    await ended(tasks.spawn("commit", failing(1, ClientClosedError("closed"), [])))  # type: ignore[arg-type]
    assert (ran, told, tasks.failure) == ([1], [], None)


async def test_close_cancels_every_task_waits_and_never_raises() -> None:
    tasks = supervisor()
    stopped: list[str] = []

    async def forever(name: str) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.append(name)

    async def raising_on_cancel() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            raise RuntimeError("a task that raises as it is cancelled")

    spawned = [tasks.spawn(n, lambda n=n: forever(n)) for n in ("a", "b")]
    spawned.append(tasks.spawn("c", raising_on_cancel))
    await asyncio.sleep(0)
    await asyncio.wait_for(tasks.close(), WAIT)
    assert sorted(stopped) == ["a", "b"]
    assert all(t.done() for t in spawned)
    with pytest.raises(ClientClosedError, match="client c-1 is closed: late is not started"):
        tasks.spawn("late", lambda: forever("late"))


async def test_cancel_ends_the_other_tasks_not_the_callers() -> None:
    tasks = supervisor()
    other = tasks.spawn("other", lambda: asyncio.Event().wait())  # type: ignore[arg-type,return-value]
    finished: list[str] = []

    async def failing_owner() -> None:
        await asyncio.sleep(0)
        tasks.cancel()
        await asyncio.sleep(0)  # still running: not cancelled itself
        finished.append("caller")

    await asyncio.wait_for(tasks.spawn("caller", failing_owner), WAIT)
    await asyncio.wait({other}, timeout=WAIT)
    assert other.cancelled()
    assert finished == ["caller"]


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (ConnectionResetError(), True),
        (NotLeaderOrFollowerError("moved"), True),
        (UnknownTopicOrPartitionError("gone"), True),
        (KafkawireError("not retriable"), False),
        (ValueError(), False),
    ],
)
def test_transient_errors(error: BaseException, transient: bool) -> None:
    assert is_transient(error) is transient
