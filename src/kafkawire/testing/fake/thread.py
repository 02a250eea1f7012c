"""A fake cluster on an event loop of its own, in a thread: for code that is not on its loop.

A :class:`~kafkawire.testing.fake.FakeCluster` answers only while the event loop that entered
it runs. Synchronous tests (kafka-python, confluent-kafka, a CLI in a subprocess, Spark's
workers), tests on another event loop, and fixtures that outlive one test's loop need it to
run elsewhere::

    with FakeClusterThread(num_brokers=1) as fake:
        fake.call(lambda cluster: cluster.create_topic("orders", partitions=3))
        consumer = KafkaConsumer("orders", bootstrap_servers=fake.bootstrap)

The cluster's state belongs to that thread's loop: reach it only through :meth:`call`, which
runs a function there and returns its result (or raises its error).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from .cluster import FakeCluster

__all__ = ["FakeClusterThread"]

T = TypeVar("T")
# Starting and stopping take milliseconds; this only keeps a wedged loop from hanging a test.
_WAIT = 30.0


class FakeClusterThread:
    """``with FakeClusterThread(**FakeCluster arguments) as fake:`` (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._arguments = args, kwargs
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="kafkawire-fake-cluster", daemon=True
        )
        self._cluster: FakeCluster | None = None

    def __enter__(self) -> FakeClusterThread:
        self._thread.start()
        try:
            self._cluster = self._run(self._start())
        except BaseException:
            self._stop_loop()
            raise
        return self

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        cluster, self._cluster = self._cluster, None
        try:
            if cluster is not None:
                self._run(cluster.__aexit__(None, None, None))
        finally:
            self._stop_loop()

    @property
    def cluster(self) -> FakeCluster:
        """The cluster itself: read-only outside its thread (use :meth:`call` to change it)."""
        if self._cluster is None:
            raise RuntimeError("FakeClusterThread: the cluster runs only inside `with`")
        return self._cluster

    @property
    def bootstrap(self) -> str:
        """``"127.0.0.1:port,..."``: every broker, for a client's bootstrap servers."""
        return self.cluster.bootstrap

    def call(self, function: Callable[[FakeCluster], T]) -> T:
        """``function(cluster)`` run on the cluster's loop; its result."""
        cluster = self.cluster

        async def run() -> T:
            return function(cluster)

        return self._run(run())

    async def _start(self) -> FakeCluster:
        args, kwargs = self._arguments
        cluster = FakeCluster(*args, **kwargs)
        return await cluster.__aenter__()

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(_WAIT)

    def _stop_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_WAIT)
        self._loop.close()
