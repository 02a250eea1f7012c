"""The event loop a client belongs to.

Rules:

- A client belongs to the event loop that first uses it: its connections, locks, events and
  tasks are that loop's. A call from another loop raises :class:`EventLoopError` before it
  touches any of them, instead of failing somewhere below with asyncio's "attached to a
  different loop" (or hanging on a lock the other loop holds).
- The check is made at each public entry of :class:`~kafkawire.cluster.Cluster`; what those
  entries call inside the cluster layer does not check again.
"""

from __future__ import annotations

import asyncio

from kafkawire.errors import EventLoopError

__all__ = ["LoopBinding"]


class LoopBinding:
    """The loop a client is bound to, once one has used it."""

    __slots__ = ("_loop",)

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def check(self) -> None:
        """Bind to the running loop on first use; from any other loop, :class:`EventLoopError`."""
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop:
            raise EventLoopError(
                "this client belongs to another event loop; open a client in each event loop "
                "that uses one"
            )
