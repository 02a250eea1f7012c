"""A loopback TCP proxy for tests: optional TLS termination, and faults on the way back.

``Proxy(upstream_port, ssl=server_context)`` listens on 127.0.0.1 (``proxy.port``), opens a
plain connection to 127.0.0.1:``upstream_port`` per client and pumps bytes both ways. Faults
apply to the broker-to-client direction and can change while connections are open:

- ``delay``: seconds to hold every chunk before passing it on (order is kept);
- ``drop``: swallow every chunk (requests stay unanswered);
- ``corrupt``: a function applied to every chunk;
- ``cut_after``: abort both sides once ``response_bytes`` (all broker-to-client bytes passed
  so far, over all connections) would exceed it;
- ``cut()``: abort every open connection now.

Two hooks read the Kafka frames instead of raw chunks (for group tests that act on one API):

- ``watch(api_key)``: called for every request a client sends, as it is passed on to the
  broker; if it returns true, the connection is cut when the broker's answer to that request
  arrives, and the answer is dropped (the broker has acted on the request, the client never
  learns how);
- ``rewrite(response)``: called with every decoded response, whose return value goes to the
  client instead (re-encoded at the request's version), as a broker with another answer would.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl as _ssl
import struct
from collections.abc import Callable, Coroutine
from typing import Any

from kafkawire.protocol import decode_response, encode_response

_SIZE = struct.Struct(">i")
_REQUEST_HEADER = struct.Struct(">hhi")  # api key, api version, correlation id


class Proxy:
    def __init__(self, upstream_port: int, *, ssl: _ssl.SSLContext | None = None) -> None:
        self.upstream_port = upstream_port
        self.ssl = ssl
        self.port = 0
        self.delay = 0.0
        self.drop = False
        self.corrupt: Callable[[bytes], bytes] | None = None
        self.cut_after: int | None = None
        self.watch: Callable[[int], bool] | None = None
        self.rewrite: Callable[[Any], Any] | None = None
        self.response_bytes = 0
        self.connections = 0
        self._writers: list[asyncio.StreamWriter] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Proxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        self.cut()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def cut(self) -> None:
        for writer in self._writers:
            writer.transport.abort()

    async def _serve(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        # Stopped by __aexit__'s cancel: ending normally keeps Python 3.11's start_server
        # callback from calling exception() on a cancelled task (and logging an error).
        with contextlib.suppress(asyncio.CancelledError):
            await self._relay(client_reader, client_writer)

    async def _relay(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        self.connections += 1

        def pumps(
            upstream_reader: asyncio.StreamReader, upstream_writer: asyncio.StreamWriter
        ) -> list[Coroutine[Any, Any, None]]:
            if self.watch is None and self.rewrite is None:
                return [
                    self._pump(client_reader, upstream_writer, faults=False),
                    self._pump(upstream_reader, client_writer, faults=True),
                ]
            asked: dict[int, tuple[int, int, bool]] = {}  # correlation id -> key, version, cut
            return [
                self._requests(client_reader, upstream_writer, asked),
                self._responses(upstream_reader, client_writer, asked),
            ]

        await relay(client_writer, self.upstream_port, self._writers, pumps)

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, faults: bool
    ) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                if faults:
                    if not await self._passes(data, writer):
                        return
                    continue
                writer.write(data)
                await writer.drain()

    async def _passes(self, data: bytes, writer: asyncio.StreamWriter) -> bool:
        """Send broker-to-client ``data`` on with the faults set; false once it cut."""
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.drop:
            return True
        if self.corrupt is not None:
            data = self.corrupt(data)
        if self.cut_after is not None:
            room = self.cut_after - self.response_bytes
            if len(data) > room:
                writer.write(data[: max(room, 0)])
                return False
        self.response_bytes += len(data)
        writer.write(data)
        await writer.drain()
        return True

    async def _requests(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        asked: dict[int, tuple[int, int, bool]],
    ) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                frame = await read_frame_bytes(reader)
                api_key, version, correlation_id = _REQUEST_HEADER.unpack_from(frame, 4)
                cut = self.watch is not None and self.watch(api_key)
                asked[correlation_id] = (api_key, version, cut)
                writer.write(frame)
                await writer.drain()

    async def _responses(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        asked: dict[int, tuple[int, int, bool]],
    ) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                frame = await read_frame_bytes(reader)
                (correlation_id,) = _SIZE.unpack_from(frame, 4)
                api_key, version, cut = asked.pop(correlation_id)
                if cut:
                    return  # ends the relay: both sides are cut, the answer dropped
                if self.rewrite is not None:
                    _, response = decode_response(frame[4:], api_key, version)
                    frame = encode_response(self.rewrite(response), correlation_id=correlation_id)
                if not await self._passes(frame, writer):
                    return


Pumps = Callable[[asyncio.StreamReader, asyncio.StreamWriter], list[Coroutine[Any, Any, None]]]


async def relay(
    client_writer: asyncio.StreamWriter,
    upstream_port: int,
    writers: list[asyncio.StreamWriter],
    pumps: Pumps,
) -> None:
    """Connect to 127.0.0.1:``upstream_port`` for a client, run ``pumps`` (made with the
    upstream reader and writer) until one ends, then cut both sides. ``writers`` collects both
    writers, for cutting them all at once."""
    writers.append(client_writer)
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
    except OSError:
        client_writer.transport.abort()
        return
    writers.append(upstream_writer)
    tasks = [asyncio.create_task(pump) for pump in pumps(upstream_reader, upstream_writer)]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for writer in (client_writer, upstream_writer):
            writer.transport.abort()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def read_frame_bytes(reader: asyncio.StreamReader) -> bytes:
    """One whole size-prefixed frame, its size included."""
    size = await reader.readexactly(_SIZE.size)
    return size + await reader.readexactly(_SIZE.unpack(size)[0])
