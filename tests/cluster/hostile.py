"""Peers no Kafka broker is, on loopback ports, for the connection and cluster tests.

``SilentServer`` accepts TCP connections and never sends a byte, not even the answer to
ApiVersions, or answers each with one of the rude answers below (closing at once, a 2 GB
frame, garbage); ``free_port`` is an address nothing listens on. What a broker says in
well-formed answers (errors, delays, silence after ApiVersions, refusals by closing, odd
Metadata) is scripted on the fake cluster with hooks (``kafkawire.testing.fake.faults``).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable


def free_port() -> int:
    """A loopback port nothing listens on (connects to it are refused) until a test opens it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


Answer = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def close_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.transport.abort()


async def send_2gb_frame(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A size prefix of 2**31 - 1 in answer to ApiVersions, and nothing after it."""
    await reader.read(1)
    writer.write(b"\x7f\xff\xff\xff")


async def answer_garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A whole frame with the first correlation id (0) and a body that is no ApiVersions."""
    await reader.read(1)
    writer.write(b"\x00\x00\x00\x0a" + b"\x00\x00\x00\x00" + b"\x00\x00\xff\xff\xff\xff")


class SilentServer:
    """Accepts TCP connections on a loopback port and never sends a byte; or, with
    ``answer``, runs it on each connection accepted. ``accepting`` is set at the first."""

    def __init__(self, answer: Answer | None = None) -> None:
        self.answer = answer
        self.port = 0
        self.accepted = 0
        self.accepting = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> SilentServer:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.transport.abort()
        await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self.accepting.set()
        self._writers.append(writer)
        if self.answer is not None:
            with contextlib.suppress(OSError):
                await self.answer(reader, writer)
