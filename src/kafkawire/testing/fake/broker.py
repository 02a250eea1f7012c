"""One fake broker: an asyncio server on a loopback port and the connections it accepted.

A stopped broker closes its listener and every connection; started again, it listens on the
same port, so clients reconnect to the address they know.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import TYPE_CHECKING

from .connection import Connection

if TYPE_CHECKING:
    from .cluster import FakeCluster

__all__ = ["BrokerServer"]

HOST = "127.0.0.1"
_connection_ids = itertools.count(1)


class BrokerServer:
    def __init__(self, cluster: FakeCluster, node_id: int) -> None:
        self.cluster = cluster
        self.node_id = node_id
        self.port = 0
        self.connections: dict[Connection, asyncio.Task[None]] = {}
        self._server: asyncio.Server | None = None

    @property
    def running(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, HOST, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        await self.cut()
        await server.wait_closed()

    async def cut(self) -> None:
        """Close every connection (the listener stays)."""
        tasks = list(self.connections.values())
        for connection, task in self.connections.items():
            connection.abort()
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        connection = Connection(self, next(_connection_ids), reader, writer)
        self.connections[connection] = task
        try:
            # Ended by cut()'s cancel: finishing normally keeps start_server's callback from
            # logging the cancellation as an error (Python 3.11).
            with contextlib.suppress(asyncio.CancelledError):
                await connection.serve()
        finally:
            del self.connections[connection]
