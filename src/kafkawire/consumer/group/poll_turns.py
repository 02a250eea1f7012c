"""Work the group membership hands to the application's next poll (the rule is
:mod:`kafkawire.consumer.group`'s: rebalances act in the poll).

The membership's background task queues such work here and waits for it; the application's
next ``getmany`` runs it before it hands out records. The work runs as a task of the
consumer's :class:`~kafkawire.consumer.tasks.BackgroundTasks`, named, so that a poll the
application cancels does not cancel it half done (it finishes, and its submitter hears how),
and so that closing the consumer cancels it.
"""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from collections.abc import Awaitable, Callable

from kafkawire.consumer.tasks import BackgroundTasks

__all__ = ["PollTurns"]

Work = Callable[[], Awaitable[object]]


class PollTurns:
    """A queue of work for the application's next poll; ``ready`` is set while it has some."""

    def __init__(self, tasks: BackgroundTasks, group_id: str) -> None:
        self._tasks = tasks
        self._name = f"rebalance of group {group_id} in the poll"
        self._queue: deque[tuple[Work, asyncio.Future[None]]] = deque()
        self.ready = asyncio.Event()

    def submit(self, work: Work) -> asyncio.Future[None]:
        """Queue ``work``; the future ends as it does. Cancelling the future withdraws it."""
        done = asyncio.get_running_loop().create_future()
        self._queue.append((work, done))
        self.ready.set()
        return done

    async def run(self) -> None:
        """Run the queued work, in order (from the application's poll). Its errors go to
        whoever submitted it, not to the application. If the poll is cancelled, the work it
        started still finishes (its future ends with it); the rest waits for the next poll."""
        while self._queue:
            work, done = self._queue.popleft()
            if done.done():  # withdrawn
                continue
            task = self._tasks.spawn(self._name, functools.partial(_settle, work, done))
            await asyncio.wait([task])  # neither raises its error nor cancels it
        self.ready.clear()


async def _settle(work: Work, done: asyncio.Future[None]) -> None:
    """Run ``work`` and end ``done`` as it ends: its error is its submitter's to handle."""
    try:
        await work()
    except asyncio.CancelledError:
        done.cancel()
        raise
    except Exception as exc:  # whatever it is, its submitter hears of it
        if not done.done():
            done.set_exception(exc)
    else:
        if not done.done():
            done.set_result(None)
