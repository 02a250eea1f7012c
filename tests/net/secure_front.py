"""TLS and SASL in front of brokers that have neither: the tests' secured cluster on loopback.

``SecureFront(upstream_ports, ssl=..., sasl=...)`` listens on one loopback port per upstream
broker, terminates TLS (``ssl``: a server context) and serves SaslHandshake and
SaslAuthenticate itself (``sasl``: makes each connection's :class:`~.sasl_server.SaslSession`),
then relays every other request to its broker. Before authentication it answers only
ApiVersions and SASL, and cuts a connection that sends anything else, as Kafka does. It
rewrites the answers that carry broker addresses (Metadata, FindCoordinator, DescribeCluster)
to its own ports, so clients reconnect through it, and adds SaslHandshake and
SaslAuthenticate to ApiVersions. ``session_lifetime_ms`` is given in SaslAuthenticate
(KIP-368): the client must authenticate again before it passes.

:class:`ThreadedSecureCluster` runs a :class:`~kafkawire.testing.fake.FakeCluster` and a front
on an event loop of their own in a thread, for tests that block (Spark, a subprocess).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import ssl as _ssl
import struct
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from kafkawire.protocol import decode_request, decode_response, encode_response
from kafkawire.testing.fake import FakeCluster

from .fakebroker import messages
from .proxy import read_frame_bytes, relay
from .sasl_server import SASL_AUTHENTICATE, SASL_HANDSHAKE, SaslSession, sasl_answer

T = TypeVar("T")

_SIZE = struct.Struct(">i")
_REQUEST_HEADER = struct.Struct(">hhi")  # api key, api version, correlation id
_API_VERSIONS, _METADATA, _FIND_COORDINATOR, _DESCRIBE_CLUSTER = 18, 3, 10, 60
_SASL_VERSIONS = {SASL_HANDSHAKE: (0, 1), SASL_AUTHENTICATE: (0, 2)}


class SecureFront:
    def __init__(
        self,
        upstream_ports: Sequence[int],
        *,
        ssl: _ssl.SSLContext | None = None,
        sasl: Callable[[], SaslSession] | None = None,
        session_lifetime_ms: int = 0,
    ) -> None:
        self.upstream_ports = list(upstream_ports)
        self.ssl = ssl
        self.sasl = sasl
        self.session_lifetime_ms = session_lifetime_ms
        self.ports: dict[int, int] = {}  # upstream port -> front port
        self.sessions: list[SaslSession] = []
        self.handshakes = 0  # SaslHandshake requests served, re-authentications included
        self._servers: list[asyncio.Server] = []
        self._writers: list[asyncio.StreamWriter] = []
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.ports.values())

    async def __aenter__(self) -> SecureFront:
        for upstream in self.upstream_ports:

            async def serve(
                reader: asyncio.StreamReader, writer: asyncio.StreamWriter, upstream: int = upstream
            ) -> None:
                task = asyncio.current_task()
                assert task is not None
                self._tasks.add(task)
                with contextlib.suppress(asyncio.CancelledError):
                    await self._relay(upstream, reader, writer)

            server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=self.ssl)
            self._servers.append(server)
            self.ports[upstream] = server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for server in self._servers:
            server.close()
        for writer in self._writers:
            writer.transport.abort()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for server in self._servers:
            await server.wait_closed()

    async def _relay(
        self, upstream: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        session = self.sasl() if self.sasl is not None else None
        if session is not None:
            self.sessions.append(session)
        asked: dict[int, tuple[int, int]] = {}

        def pumps(
            up_reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter
        ) -> list[Coroutine[Any, Any, None]]:
            return [
                self._requests(reader, writer, up_writer, session, asked),
                self._responses(up_reader, writer, asked),
            ]

        await relay(writer, upstream, self._writers, pumps)

    async def _requests(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_writer: asyncio.StreamWriter,
        session: SaslSession | None,
        asked: dict[int, tuple[int, int]],
    ) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                frame = await read_frame_bytes(reader)
                api_key, version, correlation_id = _REQUEST_HEADER.unpack_from(frame, 4)
                if session is not None and api_key in _SASL_VERSIONS:
                    header, body = decode_request(frame[4:])
                    self.handshakes += api_key == SASL_HANDSHAKE
                    answer = sasl_answer(
                        session, header, body, session_lifetime_ms=self.session_lifetime_ms
                    )
                    writer.write(encode_response(answer, correlation_id=correlation_id))
                    continue
                if session is not None and not session.authenticated and api_key != _API_VERSIONS:
                    return  # Kafka closes a connection that skips authentication
                asked[correlation_id] = (api_key, version)
                up_writer.write(frame)
                await up_writer.drain()

    async def _responses(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        asked: dict[int, tuple[int, int]],
    ) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                frame = await read_frame_bytes(reader)
                (correlation_id,) = _SIZE.unpack_from(frame, 4)
                api_key, version = asked.pop(correlation_id)
                if api_key in (_API_VERSIONS, _METADATA, _FIND_COORDINATOR, _DESCRIBE_CLUSTER):
                    frame = self._rewritten(frame, api_key, version, correlation_id)
                writer.write(frame)
                await writer.drain()

    def _rewritten(self, frame: bytes, api_key: int, version: int, correlation_id: int) -> bytes:
        try:
            _, response = decode_response(frame[4:], api_key, version)
        except Exception:  # an ApiVersions fallback answer (v0 body): as it is
            return frame
        if api_key == _API_VERSIONS:
            response = self._with_sasl(response, version)
        elif api_key == _FIND_COORDINATOR and hasattr(response, "port"):
            response = self._moved(response)
        elif api_key == _FIND_COORDINATOR:
            response = dataclasses.replace(
                response, coordinators=tuple(self._moved(c) for c in response.coordinators)
            )
        else:
            response = dataclasses.replace(
                response, brokers=tuple(self._moved(b) for b in response.brokers)
            )
        return encode_response(response, correlation_id=correlation_id)

    def _moved(self, entry: Any) -> Any:
        if entry.port not in self.ports:
            return entry
        return dataclasses.replace(entry, host="127.0.0.1", port=self.ports[entry.port])

    def _with_sasl(self, response: Any, version: int) -> Any:
        if self.sasl is None:
            return response
        served = {entry.api_key for entry in response.api_keys}
        entry_type = messages(_API_VERSIONS, version).ApiVersion
        added = tuple(
            entry_type(api_key=key, min_version=low, max_version=high)
            for key, (low, high) in _SASL_VERSIONS.items()
            if key not in served
        )
        return dataclasses.replace(response, api_keys=(*response.api_keys, *added))


class ThreadedSecureCluster:
    """A fake cluster of ``num_brokers`` behind a :class:`SecureFront` (the same keyword
    arguments), served by an event loop in a thread: ``with ThreadedSecureCluster(...) as c``.
    ``call`` runs a coroutine function there and returns its result."""

    def __init__(self, *, num_brokers: int = 1, **front: Any) -> None:
        self._num_brokers = num_brokers
        self._front_options = front
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._stop: asyncio.Event | None = None
        self._running: concurrent.futures.Future[None] | None = None
        self.cluster: FakeCluster | None = None
        self.front: SecureFront | None = None

    @property
    def bootstrap(self) -> str:
        assert self.front is not None
        return self.front.bootstrap

    def call(self, function: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(function(), self._loop).result(timeout=30)

    def __enter__(self) -> ThreadedSecureCluster:
        self._thread.start()
        started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._running = asyncio.run_coroutine_threadsafe(self._run(started), self._loop)
        started.result(timeout=30)
        return self

    async def _run(self, started: concurrent.futures.Future[None]) -> None:
        self._stop = asyncio.Event()
        try:
            async with FakeCluster(num_brokers=self._num_brokers) as cluster:
                ports = [int(a.rsplit(":", 1)[1]) for a in cluster.bootstrap.split(",")]
                async with SecureFront(ports, **self._front_options) as front:
                    self.cluster, self.front = cluster, front
                    started.set_result(None)
                    await self._stop.wait()
        except BaseException as exc:
            if not started.done():
                started.set_exception(exc)
            raise

    def __exit__(self, *exc_info: object) -> None:
        assert self._stop is not None
        assert self._running is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        try:
            self._running.result(timeout=30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
            self._loop.close()
