"""One client's background tasks and their one owner, :class:`Supervisor`.

Every task a client runs beside the application (the producer's sender and its requests, the
consumer's fetcher, its membership, an auto-commit, ...) is started here, by name, so that
something always knows it exists, ends it and hears how it ended. Rules:

- A task handles the errors it expects. Transient ones (:func:`is_transient`: a retriable
  Kafka error, a connection error no layer wrapped) it tries again after a backoff; a Kafka
  error the application must hear of it hands to its owner by its own means.
- An error a task does not handle never ends it silently. It is logged once at ERROR, under
  the client's logger and name, with its traceback, and reported once to the owner: it waits
  in the inbox (:attr:`Supervisor.failure`; :meth:`Supervisor.raise_failure` raises it once
  and empties the inbox; :attr:`Supervisor.failed` is set while it waits), wrapped by the
  owner's ``wrap``, and ``on_failure`` is called with it. While one waits, later failures are
  logged only.
- A *contained* task's unexpected error is logged the same way but is not the client's: it
  does not wait in the inbox and ``on_failure`` is not told (the KIP-714 metrics push: Java's
  telemetry never fails its client).
- Restart policy, per task: a *lasting* task (one that runs for the client's life: the
  consumer's fetcher and membership) runs again ``restart_delay`` after such an error; a
  one-shot task (a request, a commit) ends, and its owner does the work anew if it must.
  Either way the task itself ends without an error: one that awaits it is not the owner. A
  client for which any such error is the end (the producer) says so in ``on_failure``: fail
  what waits, :meth:`Supervisor.cancel` the rest.
- :class:`~kafkawire.errors.ClientClosedError` ends a task quietly: the client is closing.
- Work that runs in a callback instead of a task of its own (the producer settles each
  Produce answer so, without a task per request) hands what it does not handle to
  :meth:`Supervisor.report`, which treats it as a one-shot task's.
- :meth:`Supervisor.close` cancels every task and waits for them; it never raises what a task
  raised. A task cannot be started after it.

Kafka's Java consumer raises its heartbeat thread's failure from the next ``poll()`` and starts
a new thread; its producer fails every batch and every later call once its sender thread
meets a fatal error; franz-go's client owns each goroutine it starts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from kafkawire.errors import ClientClosedError, KafkawireError

__all__ = ["Supervisor", "Work", "is_transient"]

Work = Callable[[], Awaitable[None]]
"""What a task runs: called anew at each (re)start."""


def is_transient(error: BaseException) -> bool:
    """Whether the same work may succeed later: a retriable Kafka error, or a connection
    error the layers below did not wrap."""
    return isinstance(error, OSError) or (isinstance(error, KafkawireError) and error.retriable)


def _as_is(task: str, error: Exception) -> BaseException:
    return error


class Supervisor:
    """The background tasks of the client ``client`` (its kind and name, as in "producer
    kafkawire-1"), which logs to ``log``.

    ``wrap(task, error)`` is what the inbox holds for an unexpected ``error`` of ``task``
    (default: the error itself); ``on_failure`` is told of it as it arrives.
    """

    def __init__(
        self,
        client: str,
        *,
        log: logging.Logger,
        restart_delay: float = 0.0,
        wrap: Callable[[str, Exception], BaseException] = _as_is,
        on_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.client = client
        self._log = log
        self._restart_delay = restart_delay
        self._wrap = wrap
        self._on_failure = on_failure
        self._tasks: set[asyncio.Task[None]] = set()
        self._failure: BaseException | None = None
        self._closed = False
        self.failed = asyncio.Event()

    @property
    def failure(self) -> BaseException | None:
        """The failure waiting in the inbox, if one does (it stays there)."""
        return self._failure

    def spawn(
        self, name: str, work: Work, *, lasting: bool = False, contained: bool = False
    ) -> asyncio.Task[None]:
        """Run ``work()`` beside the application as the task ``name``; ``lasting``: run it
        again after an unexpected error; ``contained``: such an error is only logged (see the
        module doc)."""
        if self._closed:
            raise ClientClosedError(f"the {self.client} is closed: {name} is not started")
        task = asyncio.create_task(
            self._guard(name, work, lasting, contained), name=f"kafkawire {self.client}: {name}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guard(self, name: str, work: Work, lasting: bool, contained: bool) -> None:
        while True:
            try:
                await work()
                return
            except ClientClosedError:
                return  # the client is closing
            except Exception as exc:  # whatever it is, the owner hears of it
                self._report(name, exc, contained)
            if not lasting:
                return
            await asyncio.sleep(self._restart_delay)

    def report(self, name: str, error: Exception) -> None:
        """``error``, which the work ``name`` run in a callback did not handle, as if a
        one-shot task of that name had ended on it (a ClientClosedError is dropped)."""
        if not isinstance(error, ClientClosedError):
            self._report(name, error, contained=False)

    def _report(self, name: str, error: Exception, contained: bool) -> None:
        self._log.error(
            "%s: %s stopped on an error it does not handle: %s",
            self.client,
            name,
            error,
            exc_info=error,
        )
        if contained or self._failure is not None:  # one at a time: later ones logged only
            return
        failure = self._wrap(name, error)
        if failure is not error:
            failure.__cause__ = error
        self._failure = failure
        self.failed.set()
        if self._on_failure is not None:
            self._on_failure(failure)

    def raise_failure(self) -> None:
        """Raise the failure waiting in the inbox, if one does, and empty the inbox."""
        failure, self._failure = self._failure, None
        if failure is not None:
            self.failed.clear()
            raise failure

    def cancel(self) -> None:
        """Cancel every task but the caller's own, without waiting for them."""
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()

    async def close(self) -> None:
        """Cancel every task and wait for them to end; start none after."""
        self._closed = True
        tasks = [t for t in self._tasks if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
