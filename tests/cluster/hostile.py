"""Hostile and failing brokers on loopback ports, for the cluster and client fault tests.

``FakeCluster`` is one or more in-process fake brokers (``tests.net.fakebroker``) that answer
Metadata with a broker list and a topic of their choosing; every other request goes to a
handler the test writes. ``SilentServer`` accepts TCP connections and never answers anything,
or answers each with one of the rude answers below (closing at once, a 2 GB frame, garbage).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from tests.net.fakebroker import FakeBroker, FakeClient, messages

Handler = Callable[[int, FakeClient, Any, Any], Awaitable[Any]]


async def silence(node: int, client: FakeClient, header: Any, request: Any) -> None:
    """Answer nothing (a broker that stopped answering, socket open)."""


class FakeCluster:
    """``async with FakeCluster(n, handler) as cluster``: ``n`` fake brokers, node ids 1..n.

    Metadata answers list every broker (plus ``extra_brokers``, addresses that may be
    unusable) and the topic ``t`` with ``partitions`` partitions led by broker 1 at
    ``leader_epoch`` (an attribute a test may change), named with ``topic_id`` when one is
    given. ``metadata_from`` limits which nodes answer Metadata.
    """

    def __init__(
        self,
        count: int,
        handler: Handler = silence,
        *,
        partitions: int = 3,
        topic_id: uuid.UUID | None = None,
        extra_brokers: tuple[tuple[int, str, int], ...] = (),
        metadata_from: set[int] | None = None,
        api_versions: dict[int, range] | None = None,
        leader_epoch: int = -1,
    ) -> None:
        self.handler = handler
        self.partitions = partitions
        self.leader_epoch = leader_epoch
        self.topic_id = topic_id
        self.extra_brokers = extra_brokers
        self.metadata_from = metadata_from
        options = {} if api_versions is None else {"api_versions": api_versions}
        self.brokers = {
            node: FakeBroker(self._handler_of(node), **options) for node in range(1, count + 1)
        }
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> FakeCluster:
        for broker in self.brokers.values():
            await self._stack.enter_async_context(broker)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{b.port}" for b in self.brokers.values())

    def requests(self, node: int, api_key: int) -> list[Any]:
        """What broker ``node`` was sent of ``api_key``, over all its connections."""
        return [
            (header, body)
            for client in self.brokers[node].clients
            for header, body in client.requests
            if header.request_api_key == api_key
        ]

    def _handler_of(self, node: int) -> Any:
        async def handle(client: FakeClient, header: Any, request: Any) -> Any:
            if header.request_api_key == 3 and (
                self.metadata_from is None or node in self.metadata_from
            ):
                return self._metadata(header.request_api_version)
            return await self.handler(node, client, header, request)

        return handle

    def _metadata(self, version: int) -> Any:
        brokers = [(n, "127.0.0.1", b.port) for n, b in self.brokers.items()]
        return metadata_answer(
            version,
            brokers + list(self.extra_brokers),
            partitions=self.partitions,
            leader_epoch=self.leader_epoch,
            topic_id=self.topic_id,
        )


def metadata_answer(
    version: int,
    brokers: Sequence[tuple[int, str, int]],
    *,
    partitions: int = 3,
    leader_epoch: int = -1,
    topic_id: uuid.UUID | None = None,
) -> Any:
    """A MetadataResponse at ``version`` naming ``brokers`` (node id, host, port) and the topic
    ``t`` with ``partitions`` partitions led by broker 1."""
    module = messages(3, version)
    epoch = {"leader_epoch": leader_epoch} if version >= 7 else {}  # from v7
    led = tuple(
        module.MetadataResponsePartition(partition_index=p, leader_id=1, **epoch)
        for p in range(partitions)
    )
    topic = {"name": "t", "partitions": led}
    if topic_id is not None and version >= 10:
        topic["topic_id"] = topic_id
    return module.MetadataResponse(
        brokers=tuple(
            module.MetadataResponseBroker(node_id=n, host=h, port=p) for n, h, p in brokers
        ),
        topics=(module.MetadataResponseTopic(**topic),),
    )


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
    ``answer``, runs it on each connection accepted."""

    def __init__(self, answer: Answer | None = None) -> None:
        self.answer = answer
        self.port = 0
        self.accepted = 0
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
        self._writers.append(writer)
        if self.answer is not None:
            with contextlib.suppress(OSError):
                await self.answer(reader, writer)
