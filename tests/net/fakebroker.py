"""An in-process fake Kafka broker on a loopback port, for connection tests.

It decodes every request with kafkawire's sans-IO ``decode_request`` and hands it to a handler,
which answers with a response object (or ``None`` for no answer, or writes raw bytes itself).
ApiVersions is answered by default from a version table; a request at a version outside the
table's ApiVersions range gets what Kafka sends (KIP-511): error UNSUPPORTED_VERSION in a v0
body that lists the broker's ApiVersions range.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import Any

from kafkawire.errors import ConnectionClosedError
from kafkawire.messages import APIS
from kafkawire.messages.api_versions import v0 as api_versions_v0
from kafkawire.messages.metadata import v12 as metadata
from kafkawire.protocol import decode_request, encode_response, read_frame

Handler = Callable[["FakeClient", Any, Any], Awaitable[Any]]

# Every API but KIP-714's: these fakes answer only what a test scripts, and a client pushes
# metrics to any broker that lists GetTelemetrySubscriptions (71) and PushTelemetry (72).
TELEMETRY_APIS = frozenset({71, 72})
ALL_APIS: dict[int, range] = {
    key: info.versions for key, info in APIS.items() if key not in TELEMETRY_APIS
}


def messages(api_key: int, version: int) -> ModuleType:
    """The generated module of one API version (its request, response and nested classes)."""
    return importlib.import_module(f"kafkawire.messages.{APIS[api_key].module}.v{version}")


class FakeClient:
    """One accepted connection: what it sent, and ways to answer it."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.requests: list[tuple[Any, Any]] = []
        self.state: dict[str, Any] = {}

    def respond(self, header: Any, response: Any) -> None:
        self.writer.write(encode_response(response, correlation_id=header.correlation_id))

    def write(self, data: bytes) -> None:
        self.writer.write(data)

    def abort(self) -> None:
        self.writer.transport.abort()


async def no_answer(client: FakeClient, header: Any, request: Any) -> None:
    """The default handler for everything but ApiVersions: stay silent."""


class FakeBroker:
    """``async with FakeBroker(handler) as broker``: serves on 127.0.0.1:``broker.port``
    (``port``, or a free one when 0: a test can stop a broker and start one on its port)."""

    def __init__(
        self,
        handler: Handler = no_answer,
        *,
        api_versions: Mapping[int, range] = ALL_APIS,
        port: int = 0,
    ) -> None:
        self.handler = handler
        self.api_versions = dict(api_versions)
        self.clients: list[FakeClient] = []
        self.port = port
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> FakeBroker:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        # Stopped by __aexit__'s cancel: ending normally keeps Python 3.11's start_server
        # callback from calling exception() on a cancelled task (and logging an error).
        with contextlib.suppress(asyncio.CancelledError):
            await self._answer(reader, writer)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = FakeClient(writer)
        self.clients.append(client)
        try:
            while True:
                header, request = decode_request(await read_frame(reader))
                client.requests.append((header, request))
                if header.request_api_key == 18:
                    self._answer_api_versions(client, header)
                    continue
                response = await self.handler(client, header, request)
                if response is not None:
                    client.respond(header, response)
        except (ConnectionClosedError, OSError):
            pass
        finally:
            writer.transport.abort()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _answer_api_versions(self, client: FakeClient, header: Any) -> None:
        version = header.request_api_version
        if version not in self.api_versions[18]:
            own = self.api_versions[18]
            entry = api_versions_v0.ApiVersion(
                api_key=18, min_version=own.start, max_version=own.stop - 1
            )
            client.respond(
                header, api_versions_v0.ApiVersionsResponse(error_code=35, api_keys=(entry,))
            )
            return
        module = messages(18, version)
        entries = tuple(
            module.ApiVersion(api_key=key, min_version=r.start, max_version=r.stop - 1)
            for key, r in self.api_versions.items()
        )
        client.respond(header, module.ApiVersionsResponse(error_code=0, api_keys=entries))


WAIT = 5.0  # the bound on every wait in the connection tests


def request(name: str) -> metadata.MetadataRequest:
    return metadata.MetadataRequest(topics=(metadata.MetadataRequestTopic(name=name),))


def echo(request: Any) -> metadata.MetadataResponse:
    return metadata.MetadataResponse(
        topics=tuple(metadata.MetadataResponseTopic(name=t.name) for t in request.topics)
    )


def names(response: metadata.MetadataResponse) -> list[str | None]:
    return [t.name for t in response.topics]


async def echo_handler(client: FakeClient, header: Any, body: Any) -> Any:
    return echo(body)
