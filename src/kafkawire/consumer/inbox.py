"""The one way errors of the consumer's background work reach the application.

Whatever a background task cannot handle itself comes here, and the application's calls
raise it from here; nothing else raises background errors. Three kinds, raised in this order:

- An error a task did not expect: :class:`~.tasks.BackgroundTasks` holds it (see there) and
  the next call of any kind (``getmany``, ``commit``, ``position``, ...) raises it once, as a
  :class:`~.errors.BackgroundTaskError` naming the task.
- An error that ended the group membership for good (a fenced static member, not authorized,
  a group that is full, ...: :meth:`Inbox.end`): every call after raises it, since nothing the
  consumer does in the group can work any more.
- An error the work handled but the application must hear of (:meth:`Inbox.put`: a fetch or a
  group error the work goes on after, a partition with no offset and
  ``auto_offset_reset="none"``, a log truncation, ...): the next poll (``getmany``,
  ``position``) raises it once, as Java's consumer raises such errors from ``poll()``.
"""

from __future__ import annotations

import asyncio
from collections import deque

from kafkawire.errors import KafkawireError

from .tasks import BackgroundTasks

__all__ = ["Inbox"]


class Inbox:
    """The errors waiting for the application; ``signals`` are set while one waits."""

    def __init__(self, tasks: BackgroundTasks) -> None:
        self._tasks = tasks
        self._for_poll: deque[BaseException] = deque()
        self._ended: KafkawireError | None = None
        self._waiting = asyncio.Event()

    @property
    def signals(self) -> tuple[asyncio.Event, ...]:
        """Set while an error waits to be raised: what a waiting call also waits on."""
        return (self._waiting, self._tasks.failed)

    def put(self, error: BaseException) -> None:
        """Have the next poll raise ``error`` (once)."""
        self._for_poll.append(error)
        self._waiting.set()

    def end(self, error: KafkawireError) -> None:
        """The group membership ended for good on ``error``: every call raises it."""
        self._ended = error
        self._waiting.set()

    @property
    def waiting(self) -> BaseException | None:
        """What the application's next call raises, if anything (it stays in the inbox)."""
        if self._ended is not None:
            return self._ended
        if self._tasks.failure is not None:
            return self._tasks.failure
        return self._for_poll[0] if self._for_poll else None

    def raise_failures(self) -> None:
        """Raise what any call raises: a task's unexpected failure (once), then the error
        that ended the membership (every time)."""
        self._tasks.raise_failure()
        if self._ended is not None:
            raise self._ended.with_traceback(None)

    def raise_for_poll(self) -> None:
        """Raise what a poll raises: :meth:`raise_failures`, then the oldest error put."""
        self.raise_failures()
        if self._for_poll:
            error = self._for_poll.popleft()
            if not self._for_poll:
                self._waiting.clear()
            raise error
