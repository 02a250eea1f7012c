"""The consumer's background tasks and their one owner, :class:`BackgroundTasks`.

Every task the consumer runs beside the application is started here, by name: the fetcher's
loop and its Fetch to each leader, the group membership and a KIP-848 reconciliation, an
auto-commit, the positioning of partitions from the group's commits. Rules:

- A task handles the errors it expects: a Kafka error the application must hear of goes to
  its next poll, a transient one (:func:`is_transient`: a retriable Kafka error, a connection
  error) is tried again after a backoff, so that a broker that comes back is read again.
- An error a task does not expect never ends it silently: it is logged with its traceback,
  the application's next call (``getmany``, ``commit``, ``position``, ...) raises it once as a
  :class:`~.errors.BackgroundTaskError` naming the task, and a task that runs for the
  consumer's life (the fetcher, the membership) runs again after ``retry_backoff_max_ms``; a
  one-shot task (a fetch, a commit) is done anew by its owner (the next fetch, the next
  interval). Kafka's Java consumer does the same with its heartbeat thread: the thread's
  failure is raised by the next ``poll()``, which starts a new thread.
- :meth:`BackgroundTasks.close` cancels every task and waits for them; it never raises what a
  task raised.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from kafkawire.errors import ClientClosedError, KafkawireError

from .errors import BackgroundTaskError

__all__ = ["BackgroundTasks", "is_transient"]

_log = logging.getLogger(__name__)

Work = Callable[[], Awaitable[None]]


def is_transient(error: BaseException) -> bool:
    """Whether the same work may succeed later: a retriable Kafka error, or a connection
    error the layers below did not wrap."""
    return isinstance(error, OSError) or (isinstance(error, KafkawireError) and error.retriable)


class BackgroundTasks:
    """The consumer's background tasks; ``failed`` is set while a failure waits to be raised."""

    def __init__(self, restart_delay: float) -> None:
        self._restart_delay = restart_delay
        self._tasks: set[asyncio.Task[None]] = set()
        self._failure: BackgroundTaskError | None = None
        self.failed = asyncio.Event()

    def spawn(self, name: str, work: Work, *, lasting: bool = False) -> asyncio.Task[None]:
        """Run ``work()`` beside the application as the task ``name``; ``lasting``: run it
        again after an unexpected error (see the module doc)."""
        task = asyncio.create_task(self._guard(name, work, lasting), name=f"kafkawire {name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guard(self, name: str, work: Work, lasting: bool) -> None:
        while True:
            try:
                await work()
                return
            except ClientClosedError:
                return  # the consumer is closing
            except Exception as exc:  # whatever it is, the application hears of it
                self._report(name, exc)
            if not lasting:
                return
            await asyncio.sleep(self._restart_delay)

    def _report(self, name: str, error: Exception) -> None:
        _log.error("the consumer's %s stopped on an unexpected error", name, exc_info=error)
        if self._failure is None:  # one at a time: later ones are logged only
            self._failure = BackgroundTaskError(name, error)
            self._failure.__cause__ = error
            self.failed.set()

    def raise_failure(self) -> None:
        """Raise the failure waiting to be raised, if one is (once)."""
        failure, self._failure = self._failure, None
        if failure is not None:
            self.failed.clear()
            raise failure

    async def close(self) -> None:
        """Cancel every task and wait for them to end."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
