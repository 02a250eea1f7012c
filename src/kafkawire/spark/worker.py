"""The event loop of one Python process of Spark, and the Kafka clients it keeps between calls.

Spark calls the data source from Python processes it reuses: a worker runs task after task
(``spark.python.worker.reuse``, the default), a streaming query keeps one process for its
reader's planning calls and one for its writer's commits. Opening a client costs a connection,
ApiVersions and Metadata (a producer also InitProducerId) each time, which a micro-batch pays
in every task and in every ``latestOffset``; so each process keeps its clients, as Spark's own
Kafka source keeps its consumers and producers per executor. The rules:

- One event loop per process, run by a daemon thread, made on first use
  (:func:`worker_loop`). Every call of the data source that talks to Kafka runs its coroutines
  there (:meth:`WorkerLoop.run`, :meth:`WorkerLoop.submit`), from whichever thread Spark
  calls it; so while a task's thread hands Spark a batch or reads the next one from Spark, the
  loop goes on fetching or sending.
- Clients are opened on that loop and used only by coroutines run there: a client belongs to
  the loop that opened it, and refuses any other with ``EventLoopError``
  (:mod:`kafkawire.cluster._loop`). :meth:`WorkerLoop.run` from the loop's own thread is
  refused too (it would wait on itself).
- A client is keyed by its kind and by every setting that makes it: bootstrap servers, TLS
  and SASL (secrets included: another password never gets this one's connections), and a
  producer's settings. A lease is exclusive: a second lease of the same key while the first is
  out opens another client.
- A lease that ends normally gives its client back, if it is still usable (not closed; a
  producer that has not failed). One that ends with an error closes its client (what reached
  the task: a connection or request failure the client could not retry away, a failed
  delivery, a fetch cancelled in flight): it is never handed out again, and the next call
  opens a new one. A connection lost while the client is kept is opened again on next use.
- A forked child (Spark's daemon forks its workers) does not get the parent's loop, whose
  thread it has not: it makes its own on first use, and never touches the parent's clients.
- At interpreter exit (``atexit``) every client is closed and the loop stopped. Workers that
  Spark's daemon forked end with ``os._exit``, which runs no ``atexit``: the system closes their
  sockets, with nothing pending, since every task flushes before it returns.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import threading
from collections.abc import Callable, Coroutine, Hashable, Iterator, Mapping
from typing import Any, Protocol, Self, TypeVar

from kafkawire.client import KafkaClient
from kafkawire.producer import Producer

from .options import ReadOptions, WriteOptions

__all__ = [
    "WorkerLoop",
    "close_kept_clients",
    "leased_client",
    "leased_producer",
    "run_with_client",
    "worker_loop",
]

_log = logging.getLogger(__name__)
T = TypeVar("T")
_CLOSE_TIMEOUT = 10.0  # seconds to close the clients at exit: a broker that does not answer


class _Client(Protocol):
    async def __aenter__(self) -> Self: ...
    async def close(self) -> None: ...


C = TypeVar("C", bound=_Client)


class WorkerLoop:
    """An event loop running in a daemon thread, and the clients it keeps (module doc)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="kafkawire-spark", daemon=True
        )
        self._thread.start()
        self._idle: dict[Hashable, list[Any]] = {}  # touched only by the loop's coroutines
        self._leased: set[Any] = set()

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``work`` on the loop; its result (or error) comes in the future."""
        if threading.current_thread() is self._thread:
            work.close()
            raise RuntimeError("WorkerLoop.submit() from the loop's own thread would deadlock")
        return asyncio.run_coroutine_threadsafe(work, self.loop)

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the loop and wait for its result (or error). A wait interrupted
        (Ctrl-C in the waiting thread) cancels the work: nothing is left running unseen."""
        future = self.submit(work)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    @contextlib.contextmanager
    def leased(
        self, key: Hashable, opener: Callable[[], C], usable: Callable[[C], bool]
    ) -> Iterator[C]:
        """A client of ``key``: one kept idle that is still ``usable``, or a new one
        (``opener()``, entered); given back when the block ends, closed if it raised."""
        client = self.run(self._take(key, opener, usable))
        try:
            yield client
        except BaseException:
            self.run(self._close(client))
            raise
        self.run(self._give_back(key, client, usable))

    async def _take(self, key: Hashable, opener: Callable[[], C], usable: Callable[[C], bool]) -> C:
        idle = self._idle.get(key, [])
        while idle:
            client: C = idle.pop()
            if usable(client):
                self._leased.add(client)
                return client
            await _close_quietly(client)
        client = await opener().__aenter__()
        self._leased.add(client)
        return client

    async def _give_back(self, key: Hashable, client: Any, usable: Callable[[Any], bool]) -> None:
        self._leased.discard(client)
        if usable(client):
            self._idle.setdefault(key, []).append(client)
        else:
            await _close_quietly(client)

    async def _close(self, client: Any) -> None:
        self._leased.discard(client)
        await _close_quietly(client)

    async def close_idle(self) -> None:
        """Close every client kept idle (those leased stay with their holders)."""
        idle = [client for clients in self._idle.values() for client in clients]
        self._idle.clear()
        await asyncio.gather(*(_close_quietly(client) for client in idle))

    def stop(self) -> None:
        """Close every client, leased or idle, and stop the loop and its thread."""

        async def close_all() -> None:
            leased, self._leased = list(self._leased), set()
            await self.close_idle()
            await asyncio.gather(*(_close_quietly(client) for client in leased))

        try:
            self.submit(close_all()).result(timeout=_CLOSE_TIMEOUT)
        except (TimeoutError, concurrent.futures.TimeoutError):
            _log.warning("the Kafka clients of this process did not close in %ss", _CLOSE_TIMEOUT)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=_CLOSE_TIMEOUT)
            if not self._thread.is_alive():
                self.loop.close()


async def _close_quietly(client: _Client) -> None:
    """Close a client that is being dropped: what its close raises is logged, not raised."""
    try:
        await client.close()
    except Exception as error:  # a dropped client's close must not fail the task
        _log.warning("closing a kept Kafka client failed: %r", error)


class _ThisProcess:
    """The process's :class:`WorkerLoop`, once made; a forked child forgets its parent's."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.worker: WorkerLoop | None = None
        self.inherited: list[WorkerLoop] = []  # a parent's, in a forked child: never used

    def forget_after_fork(self) -> None:
        """In a forked child the parent's loop has no thread: keep it from being collected
        (its finalizer would warn) and let the child make its own on first use."""
        self.lock = threading.Lock()  # the parent may have held it while forking
        if self.worker is not None:
            self.inherited.append(self.worker)
            self.worker = None

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()


_process = _ThisProcess()


def worker_loop() -> WorkerLoop:
    """This process's :class:`WorkerLoop`, made on first use."""
    with _process.lock:
        if _process.worker is None:
            _process.worker = WorkerLoop()
        return _process.worker


def close_kept_clients() -> None:
    """Close every client this process keeps idle (tests: between two brokers' lives)."""
    worker = _process.worker
    if worker is not None:
        worker.run(worker.close_idle())


os.register_at_fork(after_in_child=_process.forget_after_fork)
atexit.register(_process.stop)


def _frozen(value: Any) -> Hashable:
    """A setting as part of a key: mappings and sequences as tuples."""
    if isinstance(value, Mapping):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    hashable: Hashable = value
    return hashable


def _client_usable(client: KafkaClient) -> bool:
    return not client.cluster.closed


def _producer_usable(producer: Producer) -> bool:
    """Not closed and not failed: the sender still runs."""
    return producer.health().sender_running


def leased_client(
    options: ReadOptions | WriteOptions,
) -> contextlib.AbstractContextManager[KafkaClient]:
    """A :class:`KafkaClient` for ``options``' brokers, TLS and SASL, leased from this
    process's loop (use it in coroutines run there)."""
    key = ("client", options.bootstrap, _frozen(options.security))
    return worker_loop().leased(
        key,
        lambda: KafkaClient(options.bootstrap, **options.client_options()),
        _client_usable,
    )


def leased_producer(options: WriteOptions) -> contextlib.AbstractContextManager[Producer]:
    """An idempotent :class:`Producer` of ``options``' settings, leased from this process's
    loop; kept between tasks, flushed by each."""
    key = ("producer", options.bootstrap, _frozen(options.producer), _frozen(options.security))
    return worker_loop().leased(
        key,
        lambda: Producer(options.bootstrap, **options.producer_options()),
        _producer_usable,
    )


def run_with_client(
    options: ReadOptions | WriteOptions, call: Callable[[KafkaClient], Coroutine[Any, Any, T]]
) -> T:
    """``call(client)`` on this process's loop, with a kept client of ``options``."""
    with leased_client(options) as client:
        return worker_loop().run(call(client))
