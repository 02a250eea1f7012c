"""Work the group membership hands to the application's next poll.

The membership runs in a background task, but what a rebalance changes in the assignment
(partitions revoked or lost, new ones taken up, the rebalance listener told) must happen
between the application's batches, as in Kafka's Java client, where it happens inside
``poll()``: an application that got records, processed them and then commits must still own
their partitions when it commits, or the commit would quietly leave them out and their next
owner would read them again. So the background task queues such work here and waits; the
application's next ``getmany`` runs it before it hands out records.
"""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from collections.abc import Awaitable, Callable

__all__ = ["PollTurns"]

Work = Callable[[], Awaitable[object]]


class PollTurns:
    """A queue of work for the application's next poll; ``ready`` is set while it has some."""

    def __init__(self) -> None:
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
            task = asyncio.ensure_future(work())
            task.add_done_callback(functools.partial(_settle, done))
            await asyncio.wait([task])  # neither raises its error nor cancels it
        self.ready.clear()


def _settle(done: asyncio.Future[None], task: asyncio.Future[object]) -> None:
    if done.done():
        return
    if task.cancelled():
        done.cancel()
    elif (error := task.exception()) is not None:
        done.set_exception(error)
    else:
        done.set_result(None)
