"""Requests written in the order their callers make them, such as a producer's batches.

Rules:

- :meth:`OrderedWrites.write` puts the request on the broker's open connection for its
  purpose before it returns, with no ``await`` in between, and returns what awaits the answer.
  So requests written one after the other reach the broker in that order, as idempotent
  producing needs (a connection answers in order too).
- Nothing is retried here: a retry would put the request behind ones written after it. The
  caller decides, and must choose the broker again (a leader may have moved).
- Without an open connection nothing is written: :class:`ConnectError`, and the metadata is
  marked stale. The caller opens the connection first (``Cluster.connection``).
- The answer is awaited within one bounded call that starts at the write (``retry_timeout``
  plus the request's deliberate wait); an error clears what it invalidates, as a send's does.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from kafkawire.errors import ConnectionClosedError, KafkawireError
from kafkawire.net.errors import ConnectError

from ._deadline import Deadlines
from ._exchange import Exchange
from ._metadata_cache import MetadataCache
from ._pool import ConnectionPool, purpose_of
from ._router import Router
from ._routing import held_for

__all__ = ["OrderedWrites"]


class OrderedWrites:
    """Writes now, answers later."""

    def __init__(
        self,
        pool: ConnectionPool,
        exchange: Exchange,
        router: Router,
        metadata: MetadataCache,
        deadlines: Deadlines,
    ) -> None:
        self._pool = pool
        self._exchange = exchange
        self._router = router
        self._metadata = metadata
        self._deadlines = deadlines

    def write(self, request: Any, node_id: int) -> Coroutine[Any, Any, Any]:
        """Write ``request`` to broker ``node_id`` now; what awaits its response."""
        purpose = purpose_of(type(request))
        conn = self._pool.connection_for(node_id, purpose)
        if conn is None:
            self._metadata.mark_stale()
            raise ConnectError(f"no open {purpose} connection to broker {node_id} to write on")
        held = held_for(request)
        what = f"{type(request).__name__} v{request.__version__}"
        deadline = self._deadlines.deadline(held)
        try:
            written = conn.write(request, timeout=self._deadlines.timeout(held))
        except KafkawireError as exc:
            if isinstance(exc, ConnectionClosedError):
                self._pool.failed(node_id, exc)
            self._router.forget(exc, request)
            raise
        pending = self._exchange.answered(node_id, conn, written, held)
        return self._bounded_answer(what, deadline, request, pending)

    async def _bounded_answer(
        self, what: str, deadline: float, request: Any, pending: Coroutine[Any, Any, Any]
    ) -> Any:
        try:
            async with self._deadlines.bounded(what, deadline):
                return await pending
        except KafkawireError as exc:
            self._router.forget(exc, request)
            raise
